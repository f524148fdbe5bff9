"""Naming the array whose checkpoint data cannot be read, instead of a TensorStore error."""

from __future__ import annotations

import contextlib
import os
import re
from typing import Iterator

from ckptbench.errors import CkptbenchError


class DataMismatchError(CkptbenchError):
  """Restored data differs from what was saved; the message names the arrays."""

  exit_code = 1


# TensorStore names the unreadable chunk: a file of a Zarr array, or a key in an OCDBT database.
_OCDBT_KEY = re.compile(r'in "([^"]+)" in OCDBT database at local file "([^"]+)"')
_LOCAL_FILE = re.compile(r'local file "([^"]+)"')
# A chunk's key below its array's directory: `c/0/1` (Zarr v3) or `0.1` (Zarr v2).
_CHUNK_KEY = re.compile(r"/(c(/\d+)*|\d+(\.\d+)*)$")


@contextlib.contextmanager
def reading_checkpoint(path: str | os.PathLike) -> Iterator[None]:
  """Turns a load that fails on unreadable array data into a DataMismatchError naming the array.

  A byte flipped in compressed data usually fails to decode instead of loading
  wrong values; either way the run fails with the array's name.

  Args:
    path: the checkpoint being read (for the message).
  """
  try:
    yield
  except Exception as e:  # noqa: BLE001  (re-raised unchanged unless it names a data file)
    described = unreadable_array_message(e)
    if described is None:
      raise
    raise DataMismatchError(f"{described} (checkpoint {path})") from e


def unreadable_array_message(error: BaseException) -> str | None:
  """'checkpoint data of array ... cannot be read', when TensorStore failed on a data chunk."""
  cause: BaseException | None = error
  seen: set[int] = set()
  while cause is not None and id(cause) not in seen:
    seen.add(id(cause))
    text = str(cause)
    ocdbt = _OCDBT_KEY.search(text)
    local = _LOCAL_FILE.search(text)
    if (ocdbt or local) and "Error reading" in text:
      key, where = (ocdbt.group(1), ocdbt.group(2)) if ocdbt else (local.group(1), local.group(1))
      array = _CHUNK_KEY.sub("", key.rstrip("/")).rsplit("/", 1)[-1]
      detail = text.split(": ", 1)[-1][:300]
      return f"checkpoint data of array {array!r} cannot be read (corrupted?) at {where}: {detail}"
    cause = cause.__cause__ or cause.__context__
  return None
