"""`storage`: the store's own roofline, through TensorStore's kvstore (no Orbax).

Writes N objects of S bytes below the run path (local, gs:// or s3://), with or
without OCDBT, at a chosen number of requests in flight; reads them back through
a fresh, uncached kvstore; checks every byte. Orbax saves through the same
drivers, so this bounds what Orbax can reach on that store (see docs/storage.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import ckptbench

_GIB = float(1 << 30)
_MIB = 1 << 20


@dataclasses.dataclass(frozen=True)
class StorageOptions(ckptbench.BenchmarkOptions):
  """Options of the kvstore roofline (a list sweeps).

  Attributes:
    object_count: objects written and read.
    object_size_mib: size of each object in MiB (fractions allowed).
    use_ocdbt: put OCDBT on top of the store's driver (one transaction for all writes).
    concurrency: requests in flight (also TensorStore's per-driver request limit).
    verify: compare every byte read with what was written (fails the run if not).
    cold_cache: on a local path, evict the objects from the page cache before
      the read (`read_0_basics/cold_cache_<how>`, see `ckptbench.evict_for_load`).
  """

  object_count: int | Sequence[int] = 16
  object_size_mib: float | Sequence[float] = 1.0
  use_ocdbt: bool | Sequence[bool] = False
  concurrency: int | Sequence[int] = 16
  verify: bool = True
  cold_cache: bool | Sequence[bool] = True

  def invalid_reason(self) -> str | None:
    if self.object_count < 1 or self.concurrency < 1 or self.object_size_mib <= 0:
      return "object_count and concurrency must be at least 1, object_size_mib positive"
    return None


def verify_objects(written: list[bytes], read: list[bytes]) -> None:
  """Raises ckptbench.DataMismatchError unless every object read equals the one written."""
  bad = [i for i, (a, b) in enumerate(zip(written, read)) if a != b]
  if bad or len(read) != len(written):
    first = bad[0] if bad else min(len(read), len(written))
    raise ckptbench.DataMismatchError(
        f"{len(bad) + abs(len(written) - len(read))} of {len(written)} objects read back differ from"
        f" what was written (first: obj_{first:05d})"
    )


@ckptbench.benchmark_options(StorageOptions)
class StorageBenchmark(ckptbench.BenchmarksGenerator):
  """Writes, reads back and verifies N objects of S bytes through TensorStore's kvstore."""

  builtin = ckptbench.Builtin(
      name="storage",
      measures="an object store's (or directory's) own roofline through TensorStore's kvstore: N objects of S bytes, OCDBT on/off, requests in flight",
      example="storage_gcs.yaml",
      saves_with=("tensorstore",),
      cold_load="read",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    options: StorageOptions = context.options
    size = max(1, int(options.object_size_mib * _MIB))
    location = str(context.path / "kvstore")
    spec = ckptbench.kvstore_spec(location, use_ocdbt=options.use_ocdbt)
    values = [ckptbench.kvstore_payload(context.repeat_index * options.object_count + i, size)
              for i in range(options.object_count)]  # fmt: skip
    total_gb = options.object_count * size / _GIB
    metrics = ckptbench.Metrics()
    with metrics.measure("write"):
      ckptbench.write_kvstore(spec, values, options.concurrency)
    metrics.record("write", "5_inventory/store_write_gb", total_gb, "GiB", "sum")
    ckptbench.evict_for_load(location, metrics, "read", options.cold_cache)
    with metrics.measure("read"):
      read = ckptbench.read_kvstore(spec, options.object_count, options.concurrency)
    metrics.record("read", "5_inventory/store_read_gb", sum(len(v) for v in read) / _GIB, "GiB", "sum")
    if options.verify:
      verify_objects(values, read)
    return ckptbench.TestResult(metrics=metrics)
