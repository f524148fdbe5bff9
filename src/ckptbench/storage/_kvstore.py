"""The store's own roofline: TensorStore kvstore writes and reads of N objects of S bytes.

This is the ceiling a checkpoint library built on TensorStore can reach on a
store (the object-store counterpart of `ckptbench probe` for local disk). The
writes go through the same kvstore drivers Orbax uses (gcs, s3, file), with or
without OCDBT on top, at a chosen number of requests in flight.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import time
from typing import Any

import numpy as np

from ckptbench.storage._emulator import S3_REGION
from ckptbench.storage._objects import endpoint_of
from ckptbench.storage._url import is_store_url, parse_store_url

_GIB = float(1 << 30)


def kvstore_spec(path: str | os.PathLike, *, use_ocdbt: bool = False) -> dict[str, Any]:
  """The TensorStore kvstore spec of a gs://, s3:// or local directory, optionally under OCDBT.

  For s3:// the endpoint comes from AWS_ENDPOINT_URL (TensorStore's s3 driver
  ignores that variable itself and would otherwise go to amazonaws.com).
  """
  text = str(path)
  if is_store_url(text):
    url = parse_store_url(text)
    prefix = url.prefix + "/" if url.prefix else ""
    if url.scheme == "gs":
      base: dict[str, Any] = {"driver": "gcs", "bucket": url.bucket, "path": prefix}
    else:
      base = {"driver": "s3", "bucket": url.bucket, "path": prefix,
              "aws_region": os.environ.get("AWS_DEFAULT_REGION", S3_REGION)}  # fmt: skip
      endpoint = endpoint_of(url)
      if endpoint:
        base["endpoint"] = endpoint
  else:
    base = {"driver": "file", "path": os.path.abspath(text) + "/"}
  return {"driver": "ocdbt", "base": base} if use_ocdbt else base


def kvstore_context(concurrency: int) -> Any:
  """A fresh TensorStore context: `concurrency` requests in flight on every driver, no cache.

  Without a cache every read goes to the store. (With one, OCDBT over
  gcp-storage-emulator also fails: "Malformed StorageGeneration", as the
  emulator sends no generation header on media reads.)
  """
  import tensorstore as ts  # noqa: PLC0415

  limit = {"limit": concurrency}
  return ts.Context({
      "gcs_request_concurrency": limit, "s3_request_concurrency": limit, "file_io_concurrency": limit,
      "cache_pool": {"total_bytes_limit": 0},
  })  # fmt: skip


def payload(index: int, size: int) -> bytes:
  """Incompressible, distinct bytes for object `index` (so no layer can deduplicate them)."""
  return np.random.default_rng(index).bytes(size)


def write_objects(kv: Any, values: list[bytes], concurrency: int) -> None:
  """Writes `values` as keys obj_00000... with at most `concurrency` writes in flight."""
  pending: list[Any] = []
  for i, value in enumerate(values):
    if len(pending) >= concurrency:
      pending.pop(0).result()
    pending.append(kv.write(f"obj_{i:05d}", value))
  for future in pending:
    future.result()


def read_objects(kv: Any, count: int, concurrency: int) -> int:
  """Reads obj_00000... back, `concurrency` at a time; returns the bytes read."""
  total = 0
  pending: list[Any] = []
  for i in range(count):
    if len(pending) >= concurrency:
      total += len(pending.pop(0).result().value)
    pending.append(kv.read(f"obj_{i:05d}"))
  for future in pending:
    total += len(future.result().value)
  return total


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
  import tensorstore as ts  # noqa: PLC0415

  spec = kvstore_spec(location, use_ocdbt=use_ocdbt)
  kv = ts.KvStore.open(spec, context=kvstore_context(concurrency)).result()
  values = [payload(i, object_bytes) for i in range(object_count)]
  t0 = time.perf_counter()
  if use_ocdbt:  # one commit for all objects, as a checkpoint save does (not one manifest update each)
    txn = ts.Transaction()
    write_objects(kv.with_transaction(txn), values, concurrency)
    txn.commit_async().result()
  else:
    write_objects(kv, values, concurrency)
  t1 = time.perf_counter()
  kv = ts.KvStore.open(spec, context=kvstore_context(concurrency)).result()  # nothing carried over
  read = read_objects(kv, object_count, concurrency)
  t2 = time.perf_counter()
  total = object_count * object_bytes
  return StoreRoofline(
      location=str(location), object_count=object_count, object_bytes=object_bytes, use_ocdbt=use_ocdbt,
      concurrency=concurrency, store_write_gbps=total / _GIB / (t1 - t0),
      store_read_gbps=read / _GIB / (t2 - t1),
      measured_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
  )  # fmt: skip
