"""Small files (sharding configs, digests) at a local path or a store URL, read and written alike."""

from __future__ import annotations

import os
import pathlib

from ckptbench.errors import CkptbenchError
from ckptbench.storage._objects import read_object, write_object
from ckptbench.storage._registry import is_store_url


def read_location(location: str | os.PathLike) -> bytes:
  """The bytes of a local file or of one object in a store (a URL of a registered scheme).

  Raises:
    CkptbenchError: naming the location when it does not exist or cannot be read.
  """
  if is_store_url(location):
    return read_object(str(location))
  path = pathlib.Path(location)
  try:
    return path.read_bytes()
  except FileNotFoundError:
    raise CkptbenchError(f"{path} does not exist") from None
  except OSError as e:
    raise CkptbenchError(f"cannot read {path}: {e.strerror or e}") from None


def write_location(location: str | os.PathLike, data: bytes) -> None:
  """Writes a local file (creating its directory) or one store object.

  Readers see the old bytes or the new ones, never half: a store object is one
  PUT, a local file is written beside its target, synced and renamed over it.

  Raises:
    CkptbenchError: naming the location when it cannot be written.
  """
  if is_store_url(location):
    write_object(str(location), data)
    return
  path = pathlib.Path(location)
  tmp = path.with_name(f".{path.name}.tmp")
  try:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "wb") as f:
      f.write(data)
      f.flush()
      os.fsync(f.fileno())
    os.replace(tmp, path)
  except OSError as e:
    tmp.unlink(missing_ok=True)
    raise CkptbenchError(f"cannot write {path}: {e.strerror or e}") from None
