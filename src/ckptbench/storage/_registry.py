"""The stores by URL scheme: the built-ins in `_stores/`, those installed packages declare, and any
registered at run time."""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import pkgutil

from ckptbench.errors import CkptbenchError
from ckptbench.storage._store import ObjectStore
from ckptbench.storage._url import StoreURL

ENTRY_POINTS = "ckptbench.object_stores"  # installed packages add stores here (docs/storage.md)
_STORES: dict[str, ObjectStore] | None = None  # loaded on first use


def _registry() -> dict[str, ObjectStore]:
  """Every store; the first call registers the `STORE` of each module in `_stores/`, then the
  stores installed packages name in the entry-point group `ckptbench.object_stores`."""
  global _STORES
  if _STORES is None:
    from ckptbench.storage import _stores  # noqa: PLC0415

    found: dict[str, ObjectStore] = {}
    for module in pkgutil.iter_modules(_stores.__path__):
      store = importlib.import_module(f"{_stores.__name__}.{module.name}").STORE
      found[store.scheme] = store
    for entry in importlib.metadata.entry_points(group=ENTRY_POINTS):
      store = _installed(entry, found)
      found[store.scheme] = store
    _STORES = found
  return _STORES


def _installed(entry: importlib.metadata.EntryPoint, found: dict[str, ObjectStore]) -> ObjectStore:
  """The store an entry point names; CkptbenchError naming the entry point when it is unusable."""
  where = f"object store {entry.name} = {entry.value} (entry points {ENTRY_POINTS})"
  try:
    store = entry.load()
  except Exception as e:  # noqa: BLE001  (a broken plugin is named, not a traceback)
    raise CkptbenchError(f"{where} cannot be loaded: {type(e).__name__}: {e}") from None
  if not isinstance(store, ObjectStore):
    raise CkptbenchError(f"{where} is not a ckptbench.ObjectStore")
  if store.scheme in found:
    raise CkptbenchError(f"{where}: {store.scheme}:// is already served by {type(found[store.scheme]).__name__}")
  return store


def register_store(store: ObjectStore) -> None:
  """Makes `store` serve URLs of its scheme, here and in every function taking a path or URL.

  Raises:
    CkptbenchError: another store already serves that scheme.
  """
  if not isinstance(store, ObjectStore):
    raise CkptbenchError(f"register_store: {store!r} is not a ckptbench.ObjectStore")
  stores = _registry()
  scheme = store.scheme
  if not scheme.isidentifier() or scheme.lower() != scheme:
    raise CkptbenchError(f"register_store: scheme {scheme!r} must be lowercase letters, digits and '_'")
  if scheme in stores and stores[scheme] is not store:
    raise CkptbenchError(f"register_store: {scheme}:// is already served by {type(stores[scheme]).__name__}")
  stores[scheme] = store


def unregister_store(scheme: str) -> None:
  """Forgets the store of `scheme` (registered stores only live as long as the process anyway)."""
  _registry().pop(scheme, None)


def schemes() -> tuple[str, ...]:
  """The registered schemes, sorted."""
  return tuple(sorted(_registry()))


def stores() -> list[ObjectStore]:
  """The registered stores, by scheme."""
  return [store for _, store in sorted(_registry().items())]


def store_for(url: StoreURL | str) -> ObjectStore:
  """The store serving `url` (a StoreURL, a URL, or a bare scheme)."""
  scheme = url.scheme if isinstance(url, StoreURL) else str(url).partition("://")[0]
  try:
    return _registry()[scheme]
  except KeyError:
    raise CkptbenchError(f"{url}: no object store serves {scheme}://; known: {url_forms()}") from None


def url_forms() -> str:
  """'gs://BUCKET/PREFIX, s3://BUCKET/PREFIX': for messages that list what is accepted."""
  return ", ".join(f"{s}://BUCKET/PREFIX" for s in schemes())


def emulators() -> dict[str, ObjectStore]:
  """`{emulator name: its store}` for the stores that have one (`ckptbench emulate NAME`)."""
  return {s.emulator: s for s in _registry().values() if s.emulator}


def orbax_write_problem(location: str | os.PathLike) -> str | None:
  """Why orbax-checkpoint cannot save to `location`, or None (a local path, or a store it writes).

  Example:
    >>> orbax_write_problem("/tmp/ckpt") is None
    True
  """
  if not is_store_url(location):
    return None
  url = parse_store_url(location)
  if store_for(url).orbax_writes:
    return None
  writable = " and ".join(f"{s}://" for s in schemes() if store_for(s).orbax_writes)
  return (
      f"orbax-checkpoint cannot write {url.scheme}:// (it would put the array data in a local"
      f" '{url.scheme}:' directory); it writes local paths and {writable}"
  )


def is_store_url(path: str | os.PathLike | None) -> bool:
  """True for a URL of a registered store (any other scheme, or a local path, is False)."""
  if path is None:
    return False
  scheme, sep, _ = str(path).partition("://")
  return bool(sep) and scheme in _registry()


def parse_store_url(text: str | os.PathLike) -> StoreURL:
  """Parses scheme://bucket[/prefix] for a registered scheme.

  Raises:
    CkptbenchError: for another scheme, a URL without a bucket, or one with a `.` or `..` segment.
  """
  text = str(text)
  scheme, sep, rest = text.partition("://")
  if not sep or scheme not in _registry():
    raise CkptbenchError(f"{text}: not an object-store URL; use {url_forms().replace(', ', ' or ')}")
  bucket, _, prefix = rest.partition("/")
  if not bucket:
    raise CkptbenchError(f"{text}: no bucket; use {scheme}://BUCKET/PREFIX")
  # A `.` or `..` names no object and would climb out of the local folder a URL's results are staged in.
  if any(part in (".", "..") for part in (bucket, *prefix.split("/"))):
    raise CkptbenchError(f"{text}: a bucket or prefix segment is '.' or '..'; name the location itself")
  return StoreURL(scheme, bucket, prefix.strip("/"))


def uses_fsspec(path: str | os.PathLike) -> bool:
  """Whether libraries reach `path` through an fsspec filesystem (a gs:// or s3:// URL) rather than
  as a local directory: PyTorch DCP then needs its FsspecWriter and FsspecReader."""
  return is_store_url(path) and store_for(str(path)).uses_fsspec
