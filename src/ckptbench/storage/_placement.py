"""Where a save's bytes went: into the store, or somewhere on local disk.

orbax-checkpoint 0.12.8 hands an s3:// path without OCDBT to TensorStore's
`file` driver, which writes the array data below a local directory named `s3:`
(the URL read as a relative path) while the metadata goes to the bucket. Such a
save may even "succeed". The check here catches it from three sides: the local
shadow directory, an empty store, and bytes TensorStore's file driver wrote.
"""

from __future__ import annotations

import os
import pathlib
import shutil

from ckptbench.storage._objects import delete_prefix
from ckptbench.storage._registry import store_for
from ckptbench.storage._url import StoreURL


def local_shadow(url: StoreURL, cwd: str | os.PathLike | None = None) -> pathlib.Path:
  """Where a library that treats `url` as a local path writes it (`./s3:/bucket/prefix`)."""
  return pathlib.Path(cwd or os.getcwd()) / f"{url.scheme}:" / url.bucket / url.prefix


def _local_bytes(path: pathlib.Path) -> tuple[int, int]:
  files, size = 0, 0
  for dirpath, _, names in os.walk(path):
    for name in names:
      try:
        size += os.stat(os.path.join(dirpath, name), follow_symlinks=False).st_size
        files += 1
      except OSError:
        continue
  return files, size


def clear_location(url: StoreURL) -> None:
  """Empties `url` in the store and its local shadow."""
  delete_prefix(url)
  shadow = local_shadow(url)
  if shadow.exists():
    shutil.rmtree(shadow, ignore_errors=True)
    _remove_empty_parents(shadow)


def empty_location(url: StoreURL) -> None:
  """`url` emptied and ready to write to, so a run starts from nothing."""
  clear_location(url)
  store_for(url).create_prefix(url)


def _remove_empty_parents(path: pathlib.Path) -> None:
  root = pathlib.Path(os.getcwd())
  for parent in path.parents:
    if parent == root or root not in parent.parents:
      break
    try:
      parent.rmdir()
    except OSError:
      break


def misplaced_bytes(
    url: StoreURL, object_count: int | None, *, file_bytes_written: float = 0.0, local_scratch: bool = False
) -> str | None:
  """Why the bytes of a save to `url` are not (all) in the store, or None when they are.

  Args:
    url: where the run saved.
    object_count: objects found below `url` in the store after the run (None: not
      counted, for a run that saved nothing or failed, which may rightly leave none).
    file_bytes_written: bytes TensorStore's local `file` driver wrote during the run.
    local_scratch: the run had a local scratch directory (`--local_directory`),
      so local file writes are expected.
  """
  local_files_expected = local_scratch or store_for(url).tensorstore_driver == "file"  # a DirectoryStore
  shadow = local_shadow(url)
  if shadow.exists():
    files, size = _local_bytes(shadow)
    if files:
      return (
          f"bytes meant for {url} went to local disk: {files} files, {size} bytes under {shadow}"
          f" (orbax-checkpoint does not write {url.scheme}:// to the store; see docs/storage.md)"
      )
  if object_count == 0:
    return f"the save left nothing in the store at {url}"
  if file_bytes_written > 0 and not local_files_expected:
    return (
        f"TensorStore wrote {file_bytes_written:.0f} bytes to local files during a save to {url};"
        " they are not in the store"
    )
  return None
