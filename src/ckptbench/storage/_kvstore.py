"""The store's own roofline: TensorStore kvstore writes and reads of N objects of S bytes.

This is the ceiling a checkpoint library built on TensorStore can reach on a
store (the object-store counterpart of `ckptbench probe` for local disk). The
writes go through the same kvstore drivers Orbax uses (each store's, or file), with or
without OCDBT on top, at a chosen number of requests in flight.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import time
from typing import Any

import numpy as np

from ckptbench.storage._registry import is_store_url, parse_store_url, store_for, stores

_GIB = float(1 << 30)


def kvstore_spec(path: str | os.PathLike, *, use_ocdbt: bool = False) -> dict[str, Any]:
  """The TensorStore kvstore spec of a store URL or a local directory, optionally under OCDBT."""
  text = str(path)
  if is_store_url(text):
    url = parse_store_url(text)
    base = store_for(url).kvstore_base(url)
  else:
    base = {"driver": "file", "path": os.path.abspath(text) + "/"}
  return {"driver": "ocdbt", "base": base} if use_ocdbt else base


def kvstore_context(spec: dict[str, Any], concurrency: int) -> Any:
  """A fresh TensorStore context for `spec`: `concurrency` requests in flight on its driver, no cache.

  Without a cache every read goes to the store. (With one, OCDBT over
  gcp-storage-emulator also fails: "Malformed StorageGeneration", as the
  emulator sends no generation header on media reads.)
  """
  import tensorstore as ts  # noqa: PLC0415

  base = spec.get("base", spec) if spec.get("driver") == "ocdbt" else spec
  resources = {s.tensorstore_driver: s.tensorstore_concurrency for s in stores()}
  resources["file"] = "file_io_concurrency"
  limit = {resources[base["driver"]]: {"limit": concurrency}} if base.get("driver") in resources else {}
  return ts.Context({**limit, "cache_pool": {"total_bytes_limit": 0}})


def payload(index: int, size: int) -> bytes:
  """Incompressible, distinct bytes for object `index` (so no layer can deduplicate them)."""
  return np.random.default_rng(index).bytes(size)


def _in_flight(futures: list[Any], concurrency: int) -> list[Any]:
  """Waits for the oldest futures until fewer than `concurrency` remain."""
  while len(futures) >= concurrency:
    futures.pop(0).result()
  return futures


def write_kvstore(spec: dict[str, Any], values: list[bytes], concurrency: int) -> None:
  """Writes `values` as keys obj_00000... through a fresh kvstore, `concurrency` writes in flight.

  Under OCDBT all writes go in one transaction, committed once, as a
  checkpoint save does (not one manifest update per object).
  """
  import tensorstore as ts  # noqa: PLC0415

  kv = ts.KvStore.open(spec, context=kvstore_context(spec, concurrency)).result()
  txn = ts.Transaction() if spec.get("driver") == "ocdbt" else None
  target = kv.with_transaction(txn) if txn is not None else kv
  pending: list[Any] = []
  for i, value in enumerate(values):
    _in_flight(pending, concurrency).append(target.write(f"obj_{i:05d}", value))
  _in_flight(pending, 1)
  if txn is not None:
    txn.commit_async().result()


def read_kvstore(spec: dict[str, Any], count: int, concurrency: int) -> list[bytes]:
  """Reads obj_00000... back through a fresh kvstore (nothing cached), `concurrency` reads in flight."""
  import tensorstore as ts  # noqa: PLC0415

  kv = ts.KvStore.open(spec, context=kvstore_context(spec, concurrency)).result()
  futures = [kv.read(f"obj_{i:05d}") for i in range(min(count, concurrency))]
  out: list[bytes] = []
  for i in range(count):
    out.append(bytes(futures[i].result().value))
    if i + concurrency < count:
      futures.append(kv.read(f"obj_{i + concurrency:05d}"))
  return out


@dataclasses.dataclass(frozen=True)
class StoreRoofline:
  """What the store delivered to TensorStore (GiB/s), and how it was measured."""

  location: str
  object_count: int
  object_bytes: int
  use_ocdbt: bool
  concurrency: int
  store_write_gbps: float
  store_read_gbps: float
  measured_at: str

  def limits(self) -> dict[str, float]:
    """`{limit name: GiB/s}`, as `StorageProbe.limits()` for local disk."""
    return {"store_write": self.store_write_gbps, "store_read": self.store_read_gbps}


def measure_store(
    location: str, *, object_count: int = 16, object_bytes: int = 4 << 20, use_ocdbt: bool = False,
    concurrency: int = 16,
) -> StoreRoofline:
  """Writes then reads `object_count` objects of `object_bytes` below `location` (left there)."""
  spec = kvstore_spec(location, use_ocdbt=use_ocdbt)
  values = [payload(i, object_bytes) for i in range(object_count)]
  t0 = time.perf_counter()
  write_kvstore(spec, values, concurrency)
  t1 = time.perf_counter()
  read = sum(len(v) for v in read_kvstore(spec, object_count, concurrency))
  t2 = time.perf_counter()
  total = object_count * object_bytes
  return StoreRoofline(
      location=str(location), object_count=object_count, object_bytes=object_bytes, use_ocdbt=use_ocdbt,
      concurrency=concurrency, store_write_gbps=total / _GIB / (t1 - t0),
      store_read_gbps=read / _GIB / (t2 - t1),
      measured_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
  )  # fmt: skip
