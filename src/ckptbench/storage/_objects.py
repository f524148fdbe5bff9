"""Talking to a bucket with explicit timeouts: list, delete, read, write, reachability.

Each call goes to the store of the URL's scheme (`store_for`); every client
call there is bounded (connect and read timeouts, few retries), so a wrong
endpoint or a dead emulator gives an error in seconds, never a hang.
"""

from __future__ import annotations

import os

from ckptbench.errors import CkptbenchError
from ckptbench.storage._registry import parse_store_url, store_for
from ckptbench.storage._store import StoredObject
from ckptbench.storage._url import StoreURL


def _parsed(url: StoreURL | str) -> StoreURL:
  return parse_store_url(url) if isinstance(url, str) else url


def list_objects(url: StoreURL | str) -> list[StoredObject]:
  """Every object below `url` (its prefix as a directory), with sizes."""
  url = _parsed(url)
  return store_for(url).list_objects(url)


def delete_prefix(url: StoreURL | str) -> int:
  """Deletes every object below `url`; returns how many."""
  url = _parsed(url)
  store = store_for(url)
  keys = [o.key for o in store.list_objects(url)]
  store.delete_objects(url, keys)
  return len(keys)


def check_store(url: StoreURL | str) -> None:
  """A quick check that `url`'s bucket is reachable, readable and writable-looking.

  Raises:
    CkptbenchError: one line naming the URL and what to set (unreachable
      endpoint, missing credentials, missing bucket).
  """
  url = _parsed(url)
  store = store_for(url)
  try:
    store.check(url)
  except CkptbenchError:
    raise
  except Exception as e:  # noqa: BLE001  (every client error becomes one line)
    endpoint = store.endpoint() or store.default_endpoint()
    text = f"{type(e).__name__}: {e}".splitlines()[0][:300]
    if _looks_unreachable(e):
      hint = f"check {store.endpoint_variable} or the network" if store.endpoint_variable else "check the network"
      raise CkptbenchError(f"{url}: the store at {endpoint} cannot be reached ({text}); {hint}") from None
    raise CkptbenchError(f"{url}: the store at {endpoint} refused the check ({text})") from None


def _looks_unreachable(e: BaseException) -> bool:
  names = {type(x).__name__ for x in _chain(e)}
  return bool(names & {"ConnectionError", "EndpointConnectionError", "ConnectTimeoutError",
                       "ConnectTimeout", "ReadTimeout", "ReadTimeoutError", "NewConnectionError",
                       "MaxRetryError", "ConnectionRefusedError", "TransportError", "RetryError"})  # fmt: skip


def _chain(e: BaseException | None):
  seen = set()
  while e is not None and id(e) not in seen:
    seen.add(id(e))
    yield e
    e = e.__cause__ or e.__context__


def read_object(url: StoreURL | str) -> bytes:
  """The bytes of one object (its URL's prefix is the key).

  Raises:
    CkptbenchError: when the object does not exist.
  """
  url = _parsed(url)
  return store_for(url).read_object(url)


def write_object(url: StoreURL | str, data: bytes) -> None:
  """Writes one object (a single PUT: readers see the old or the new bytes, never half)."""
  url = _parsed(url)
  store_for(url).write_object(url, data)


def upload_directory(local: str | os.PathLike, url: StoreURL | str) -> int:
  """Copies every file below `local` to the same relative keys below `url`; returns how many."""
  url = _parsed(url)
  count = 0
  for dirpath, _, names in os.walk(local):
    for name in names:
      full = os.path.join(dirpath, name)
      rel = os.path.relpath(full, local).replace(os.sep, "/")
      with open(full, "rb") as f:
        write_object(url.join(rel), f.read())
      count += 1
  return count
