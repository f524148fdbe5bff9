"""Loads read cold by default, and every load says how it read (`<op>_0_basics/cold_cache_<how>`)."""

from __future__ import annotations

import importlib
import inspect
import os

import pytest

import ckptbench
from builtin_support import ok_metrics, run_text
from ckptbench.config import catalogue

EVICTED = ("fadvise", "drop_caches")  # drop_caches only where fadvise is unavailable


def _how(metrics: dict, op: str) -> list[str]:
  prefix = f"{op}_0_basics/cold_cache_"
  return [k.removeprefix(prefix) for k in metrics if k.startswith(prefix)]


@pytest.mark.parametrize("path", sorted(catalogue()), ids=lambda path: catalogue()[path].name)
def test_every_builtin_that_loads_a_checkpoint_reads_it_cold_by_default(path):
  """A built-in that declares a `cold_load` has `cold_cache` (default true) and evicts before that op;
  one that declares none has no such option."""
  module, _, attr = path.rpartition(".")
  generator = getattr(importlib.import_module(module), attr)
  op = catalogue()[path].cold_load
  field = {f.name: f for f in generator.options_class.__dataclass_fields__.values()}.get("cold_cache")
  if not op:
    assert field is None, f"{attr} has cold_cache: declare the load it evicts before as its cold_load"
    return
  assert field is not None and field.default is True, f"{attr}: give it a cold_cache option (default true)"
  source = inspect.getsource(inspect.getmodule(generator.test_fn))
  assert "evict_for_load(" in source and f'"{op}"' in source, f"{attr} never evicts before {op!r}"


def test_a_local_checkpoint_is_evicted_and_a_warm_load_says_so(tmp_path):
  (tmp_path / "ckpt").mkdir()
  (tmp_path / "ckpt" / "data").write_bytes(b"x" * 4096)
  metrics = ckptbench.Metrics()
  assert ckptbench.evict_for_load(tmp_path / "ckpt", metrics, "load") in EVICTED
  assert ckptbench.evict_for_load(tmp_path / "ckpt", metrics, "restore", cold=False) == "warm"
  tags = metrics.to_dict()
  assert _how(tags, "load")[0] in EVICTED and _how(tags, "restore") == ["warm"]
  assert tags["restore_0_basics/cold_cache_warm"] == ckptbench.MetricEntry(1.0, "count")


def test_an_object_store_url_is_not_claimed_evicted():
  metrics = ckptbench.Metrics()
  assert ckptbench.evict_for_load("gs://bucket/run/ckpt", metrics, "load") == "object_store"
  assert _how(metrics.to_dict(), "load") == ["object_store"]


@pytest.mark.skipif(not os.access("/dev/shm", os.W_OK), reason="needs a writable /dev/shm (tmpfs)")
def test_a_checkpoint_in_memory_records_memory_and_the_warmest_tier_wins(tmp_path):
  import tempfile

  with tempfile.TemporaryDirectory(dir="/dev/shm") as ram_disk:
    metrics = ckptbench.Metrics()
    assert ckptbench.evict_for_load(ram_disk, metrics, "restore") == "memory"
    # A load that may read a disk tier or a RAM-disk tier cannot claim to be cold.
    assert ckptbench.evict_for_load([tmp_path, ram_disk], metrics, "restore_tiers") == "memory"


SUITE = """\
suite_name: cold
checkpoint_config:
  spec:
    w: {dtype: float32, shape: [16, 8], sharding: [model]}
    b: {dtype: float32, shape: [8], sharding: [null]}
mesh_config: {mesh_axes: [replica, model], ici_parallelism: {replica: 2, model: 4}}
benchmarks:
  - generator: checkpoint_manager
    options: {num_steps: 2, save_interval_steps: 1, max_to_keep: 1, cold_cache: [true, false]}
  - generator: restore_and_broadcast
    options: {async_enabled: false, cold_cache: [true, false]}
  - generator: resharding
    options: {async_enabled: false, target_sharding: replicated, cold_cache: [true, false]}
"""


def test_builtins_evict_before_the_load_by_default_and_say_when_warm(tmp_path):
  outcome = run_text(tmp_path, SUITE)
  ok_metrics(outcome)
  seen = {}
  for record in outcome.records:
    op = "restore" if record.generator.endswith("CheckpointManagerBenchmark") else "load"
    name = record.generator.rsplit(".", 1)[1]
    seen[(name, record.options["cold_cache"])] = _how(record.metrics, op)
  assert len(seen) == 6
  for (name, cold), how in seen.items():
    assert len(how) == 1 and (how[0] in EVICTED if cold else how[0] == "warm"), (name, cold, how)
