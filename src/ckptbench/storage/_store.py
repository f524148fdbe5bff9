"""The ObjectStore protocol: everything ckptbench does that depends on which store a URL names.

One subclass per URL scheme (`_stores/gcs.py`, `_stores/s3.py`; `DirectoryStore`
maps a scheme onto a local or mounted directory). The rest of ckptbench asks the
store of a URL (`store_for`) and never compares schemes itself, so a new store is
one module in `_stores/` (see docs/storage.md, "Adding an object store").
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any, ClassVar

from ckptbench.errors import CkptbenchError
from ckptbench.storage._url import StoreURL

TIMEOUT_S = 10.0  # every client call to a store is bounded by this (connect and read)


@dataclasses.dataclass(frozen=True)
class StoredObject:
  key: str  # relative to the listed prefix
  size: int


@dataclasses.dataclass(frozen=True)
class Prices:
  """USD prices of one store (GB = 10^9 bytes, as the clouds bill)."""

  storage_gb_month: float
  put_per_1000: float  # writes; GCS class A, S3 PUT/COPY/POST
  get_per_1000: float  # reads and metadata reads; GCS class B, S3 GET
  list_per_1000: float  # listings; billed as writes on both
  source: str


class ObjectStore(abc.ABC):
  """One kind of store, named by its URL scheme.

  Required: `scheme`, `tensorstore_driver`, and the client calls below (each
  bounded by TIMEOUT_S; each raises CkptbenchError naming the URL for what a
  user can fix). Optional features keep their defaults: no price table, no
  emulator, no shaped link.

  Class attributes:
    scheme: the URL scheme ("gs" for gs://bucket/prefix).
    tensorstore_driver: TensorStore's kvstore driver for it; also the name in
      TensorStore's request counters (kvstore_<driver>_write ...).
    orbax_writes: orbax-checkpoint saves to such a run path with its bytes in
      the store (False refuses the Orbax built-ins before anything runs).
    uses_fsspec: libraries reach it through an fsspec filesystem (PyTorch DCP's
      FsspecWriter) rather than as a local path.
    prices: list prices (docs/storage.md), or None: no cost tags.
    endpoint_variable: the environment variable that names a non-default
      endpoint (an emulator, the shaped link); None: it has no HTTP endpoint.
    emulator: the name `ckptbench emulate NAME` starts it by; None: no emulator.
  """

  scheme: ClassVar[str]
  tensorstore_driver: ClassVar[str]
  orbax_writes: ClassVar[bool] = True
  uses_fsspec: ClassVar[bool] = False
  prices: ClassVar[Prices | None] = None
  endpoint_variable: ClassVar[str | None] = None
  emulator: ClassVar[str | None] = None

  # -- TensorStore and the path libraries get
  @abc.abstractmethod
  def kvstore_base(self, url: StoreURL) -> dict[str, Any]:
    """The TensorStore kvstore spec of `url` (a directory: its path ends with "/")."""

  @property
  def tensorstore_concurrency(self) -> str:
    """The TensorStore context resource that bounds this driver's requests in flight."""
    return f"{self.tensorstore_driver}_request_concurrency"

  def run_path(self, url: StoreURL) -> Any:
    """The path object a benchmark gets for `url` (Orbax's epath.Path, which gcsfs/s3fs back)."""
    from etils import epath  # noqa: PLC0415  (Orbax's own path type; it ships with Orbax)

    return epath.Path(str(url))

  # -- bounded client calls
  @abc.abstractmethod
  def list_objects(self, url: StoreURL) -> list[StoredObject]:
    """Every object below `url` (its prefix as a directory), keys relative to it."""

  @abc.abstractmethod
  def delete_objects(self, url: StoreURL, keys: list[str]) -> None:
    """Deletes the objects `keys` (relative to `url`)."""

  def create_prefix(self, url: StoreURL) -> None:
    """Makes `url` exist as an empty place to write to (object stores need nothing)."""

  @abc.abstractmethod
  def read_object(self, url: StoreURL) -> bytes:
    """The bytes of one object; CkptbenchError '<url> does not exist' when it does not."""

  @abc.abstractmethod
  def write_object(self, url: StoreURL, data: bytes) -> None:
    """Writes one object whole (readers see the old or the new bytes, never half)."""

  @abc.abstractmethod
  def check(self, url: StoreURL) -> None:
    """Raises CkptbenchError naming what to set when the bucket cannot be used; client errors
    may pass through (`check_store` turns them into one line)."""

  # -- endpoint and the shaped link
  def endpoint(self) -> str | None:
    """The endpoint set in the environment (None: the cloud's own)."""
    return None

  def default_endpoint(self) -> str:
    """How messages name the endpoint when none is set."""
    return f"{self.scheme}'s default endpoint"

  def link_env(self, endpoint: str) -> dict[str, str]:
    """The variables that send every client of this store to `endpoint` (the shaped link)."""
    raise CkptbenchError(f"--link: {self.scheme}:// has no HTTP endpoint to shape")

  # -- emulator (`ckptbench emulate NAME`, tests)
  def emulator_command(self, port: int, bucket: str) -> list[str]:
    """The command that serves an emulator of this store on 127.0.0.1:`port`."""
    raise CkptbenchError(f"{self.scheme}:// has no emulator")

  def emulator_ready_url(self, endpoint: str) -> str:
    """A URL the emulator answers once it is up."""
    return endpoint

  def emulator_env(self, endpoint: str) -> dict[str, str]:
    """The environment that points every client at an emulator on `endpoint`."""
    return self.link_env(endpoint)

  def prepare_emulator(self, endpoint: str, bucket: str) -> None:
    """After start: create `bucket` unless the emulator's command line already did."""

