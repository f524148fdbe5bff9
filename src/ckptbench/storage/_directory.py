"""DirectoryStore: a URL scheme served by a local or mounted directory (scheme://bucket/prefix is
ROOT/bucket/prefix), the trivial ObjectStore.

Register one for a POSIX parallel filesystem mounted on every host (Lustre,
GPFS, a NFS share) so suites name it by URL, and ckptbench checks, lists, prices
and cleans it like a bucket: `ckptbench.register_store(DirectoryStore("lustre", "/mnt/lustre"))`.
Benchmarks get the directory as a local path, so every library can write it.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
from typing import Any

from ckptbench.errors import CkptbenchError
from ckptbench.storage._store import ObjectStore, Prices, StoredObject
from ckptbench.storage._url import StoreURL


class DirectoryStore(ObjectStore):
  """Serves `scheme`:// from the directory `root`; each bucket is a directory directly below it.

  Args:
    scheme: the URL scheme it serves.
    root: the directory holding the buckets (it must exist; buckets are not created).
    prices: its prices, if it has any (None: no cost tags).
  """

  tensorstore_driver = "file"

  def __init__(self, scheme: str, root: str | os.PathLike, prices: Prices | None = None):
    self.scheme = scheme  # type: ignore[misc]  (per instance: one class serves any scheme)
    self.root = pathlib.Path(root).resolve()
    self.prices = prices  # type: ignore[misc]

  def local_path(self, url: StoreURL) -> pathlib.Path:
    """Where `url` lies on this machine."""
    path = (self.root / url.bucket / url.prefix).resolve()
    if path != self.root and self.root not in path.parents:
      raise CkptbenchError(f"{url}: leaves {self.root}")
    return path

  @property
  def tensorstore_concurrency(self) -> str:
    return "file_io_concurrency"

  def kvstore_base(self, url: StoreURL) -> dict[str, Any]:
    return {"driver": "file", "path": str(self.local_path(url)) + "/"}

  def run_path(self, url: StoreURL) -> pathlib.Path:
    return self.local_path(url)

  def list_objects(self, url: StoreURL) -> list[StoredObject]:
    top = self.local_path(url)
    out = []
    for dirpath, _, names in os.walk(top):
      for name in names:
        full = os.path.join(dirpath, name)
        out.append(StoredObject(os.path.relpath(full, top).replace(os.sep, "/"), os.path.getsize(full)))
    return out

  def delete_objects(self, url: StoreURL, keys: list[str]) -> None:
    for key in keys:
      self.local_path(url.join(key)).unlink(missing_ok=True)
    bucket = self.root / url.bucket
    for dirpath, _, _ in os.walk(self.local_path(url), topdown=False):  # no empty directories left
      if pathlib.Path(dirpath) != bucket:
        with contextlib.suppress(OSError):
          os.rmdir(dirpath)

  def create_prefix(self, url: StoreURL) -> None:
    self.local_path(url).mkdir(parents=True, exist_ok=True)

  def read_object(self, url: StoreURL) -> bytes:
    try:
      return self.local_path(url).read_bytes()
    except (FileNotFoundError, IsADirectoryError):
      raise CkptbenchError(f"{url} does not exist") from None

  def write_object(self, url: StoreURL, data: bytes) -> None:
    path = self.local_path(url)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
      f.write(data)
      f.flush()
      os.fsync(f.fileno())
    os.replace(tmp, path)  # readers see the old bytes or the new ones

  def check(self, url: StoreURL) -> None:
    bucket = self.root / url.bucket
    if not bucket.is_dir():
      raise CkptbenchError(f"{url}: bucket '{url.bucket}' does not exist; create the directory {bucket}")
    if not os.access(bucket, os.W_OK):
      raise CkptbenchError(f"{url}: cannot write to {bucket}")

  def default_endpoint(self) -> str:
    return str(self.root)
