"""docs/reproductions.md: each published result's shape, from the example suite its row names.

Each test runs the row's example suite (`ckptbench run <name>`, as the page says) with `--set`
overrides that make it cheap (one measured repeat, smaller sizes, fewer steps), and checks the shape
the row states (a trend, a share, a size or request counts), never an absolute time.
"""

from __future__ import annotations

import collections
import json
import pathlib
import statistics

import pytest

import ckptbench
from store_servers import gcs_store  # noqa: F401  (fixture)

pytestmark = pytest.mark.host_memory("inline", reason=(
    "these tests read timings and counts of the reproductions; every shipped example runs with the "
    "memory pass in tests/test_example_walk.py"
))

MLPERF_BYTES_PER_PARAMETER = 14  # MLPerf Storage v2.0: Llama 3 8B's checkpoint is 105 GiB
MLPERF_TEST_SCALE = 0.00002  # the presets' smallest sizes (their embeddings stay whole)
PAGE = pathlib.Path(__file__).resolve().parent.parent / "docs" / "reproductions.md"
EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
REPRODUCTIONS = ["repro_async_dcp", "repro_disk_share", "repro_mlperf_sizes", "repro_async_blocking", "repro_delete_stall"]


def _medians(out: pathlib.Path, *tags: str) -> dict[str, dict[str, float]]:
  """{benchmark name: {tag: median over the measured runs}}; fails on any failed run."""
  samples: dict[str, dict[str, list[float]]] = collections.defaultdict(lambda: collections.defaultdict(list))
  records = [ckptbench.RunRecord.from_json(json.loads(line)) for line in (out / "results.jsonl").read_text().splitlines()]
  for record in records:
    assert record.error is None, record.error
  for record in ckptbench.timed_runs(records):
    for tag in tags:
      samples[record.benchmark][tag].append(record.value(tag))
  return {name: {tag: statistics.median(v) for tag, v in by_tag.items()} for name, by_tag in samples.items()}


def _run(cli, tmp_path, name: str, *flags: str, overrides: tuple[str, ...] = ()) -> pathlib.Path:
  """Runs the example suite with one measured repeat and `overrides` (`--set KEY=VALUE`)."""
  out = tmp_path / name
  sets = [arg for override in ("num_repeats=1", *overrides) for arg in ("--set", override)]
  done = cli("run", name, "-o", str(out), "--no-views", "--no-progress", *sets, *flags, timeout=280)
  assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
  return out


def test_every_row_names_an_example_suite_that_exists():
  from ckptbench.cli._examples import example_names

  # The table's rows; the memory section's suites are tested by tests/test_memory_shapes.py.
  lines = [line for line in PAGE.read_text().splitlines() if line.startswith("|") and "`ckptbench run " in line]
  named = {line.split("`ckptbench run ")[1].split()[0] for line in lines}
  assert named == set(REPRODUCTIONS) and named <= set(example_names())


@pytest.mark.parametrize("name", REPRODUCTIONS)
def test_each_row_suite_loads_and_expands(name):
  from ckptbench.config import load_suite
  from ckptbench.engine._sweep import expand

  devices = 8 if name in ("repro_mlperf_sizes", "repro_async_blocking") else 2  # what `ckptbench plan` gives each
  plan = expand(load_suite(EXAMPLES / f"{name}.yaml"), devices)
  assert plan.benchmarks or name in ("repro_async_dcp", "repro_disk_share")  # those two need the torch extra


@pytest.mark.slow
def test_async_dcp_writes_in_the_background_and_the_background_grows_with_size(cli, tmp_path):
  pytest.importorskip("torch", reason="the torch extra is not installed (pip install 'ckptbench[torch]')")
  # 34 MiB against 228 MiB (6.7 times the bytes; the page's command: 97 and 272 MiB), async only, after a warm-up.
  overrides = ("num_warmups=1", "benchmarks[0].options.library=[dcp_async]", "checkpoint_configs[0].scale=0.0005",
               "checkpoint_configs[1].scale=0.0075")  # fmt: skip
  out = _run(cli, tmp_path, "repro_async_dcp", overrides=overrides)
  m = _medians(out, "save_0_basics/time_s", "save_blocking_0_basics/time_s")
  background = {}
  for ckpt, scale in enumerate(("0.0005", "0.0075")):  # each config named by what differs: its scale
    run = m[f"PyTorchBenchmark(library=dcp_async, scale: {scale})"]
    background[ckpt] = run["save_0_basics/time_s"] - run["save_blocking_0_basics/time_s"]
    assert background[ckpt] > 0  # the write goes on after async_save returned
  assert background[1] > background[0]  # several times the bytes: more left to write after the caller is free


@pytest.mark.slow
def test_each_writer_is_a_share_of_the_disk_write_bandwidth_and_some_leave_it_unused(cli, tmp_path):
  pytest.importorskip("torch", reason="the torch extra is not installed (pip install 'ckptbench[torch]')")
  share = "save_4_throughput/save_total_gbps_of_disk_write"
  out = _run(cli, tmp_path, "repro_disk_share", overrides=("num_warmups=0", "checkpoint_config.scale=0.001"))
  m = _medians(out, share)
  shares = {name.split("library=")[1].rstrip(")"): v[share] for name, v in m.items()}
  assert set(shares) == {"torch_save", "dcp", "orbax"}
  assert all(s > 0 for s in shares.values())
  assert min(shares.values()) < 1  # FastPersist's premise: a stock writer leaves disk bandwidth unused


@pytest.mark.slow
def test_mlperf_method_writes_and_reads_ten_and_sizes_follow_bytes_per_parameter(cli, tmp_path):
  import ckptbench
  from ckptbench.config import load_suite

  options = load_suite(EXAMPLES / "repro_mlperf_sizes.yaml").config.benchmarks[0].options
  assert options["num_checkpoints_write"] == options["num_checkpoints_read"] == 10  # MLPerf's method
  # Run with 2 of each (the counts are checked against what was asked) at the presets' smallest sizes.
  overrides = (*(f"checkpoint_configs[{i}].scale={MLPERF_TEST_SCALE:f}" for i in (0, 1)),
               "benchmarks[0].options.num_checkpoints_write=2", "benchmarks[0].options.num_checkpoints_read=2")
  out = _run(cli, tmp_path, "repro_mlperf_sizes", overrides=overrides)
  tags = ("mlperf_9_other/checkpoint_size_GB", "mlperf_9_other/num_checkpoints_write",
          "mlperf_9_other/num_checkpoints_read")
  m = _medians(out, *tags)
  for preset in ("llama-3.1-8b", "llama-3.1-70b"):
    run = m[f"MlperfStorageBenchmark(preset: {preset})"]
    assert run["mlperf_9_other/num_checkpoints_write"] == run["mlperf_9_other/num_checkpoints_read"] == 2
    params = ckptbench.preset_summary(preset, MLPERF_TEST_SCALE, True)["param_count"]
    bytes_per_parameter = run["mlperf_9_other/checkpoint_size_GB"] * 2**30 / params
    assert bytes_per_parameter == pytest.approx(10, rel=1e-3)  # bf16 parameters + two float32 moments
  full = ckptbench.preset_summary("llama-3.1-8b")["param_count"]
  assert full * MLPERF_BYTES_PER_PARAMETER / 2**30 == pytest.approx(105, abs=0.5)  # MLPerf's 8B size


@pytest.mark.slow
def test_an_async_save_keeps_per_array_requests_out_of_its_blocking_part(cli, tmp_path, gcs_store):  # noqa: F811
  # Orbax issue 179's blocking per-array requests: in Orbax 0.12.8 they moved to the background.
  out = _run(cli, tmp_path, "repro_async_blocking", "--checkpoint_root", f"{gcs_store.url}/r179", "--link", "rtt=20ms",
             overrides=("num_warmups=0",))  # fmt: skip
  kinds = ("put", "get", "list")
  blocking = [f"save_blocking_5_inventory/store_{k}_count" for k in kinds]
  whole = [f"save_5_inventory/store_{k}_count" for k in kinds]
  m = _medians(out, *blocking, *whole)
  for ocdbt in (False, True):
    few, many = (m[f"SaveRestoreBenchmark(use_ocdbt={ocdbt}, spec: {n} arrays)"] for n in (3, 24))
    assert [few[t] for t in blocking] == [many[t] for t in blocking]  # 3 or 24 arrays: the same requests block
    assert sum(few[t] for t in blocking) < sum(few[t] for t in whole)
  few, many = (m[f"SaveRestoreBenchmark(use_ocdbt=False, spec: {n} arrays)"] for n in (3, 24))
  assert many["save_5_inventory/store_put_count"] > few["save_5_inventory/store_put_count"]  # files per array


@pytest.mark.slow
def test_deleting_the_previous_step_on_a_bucket_lands_in_the_next_save(cli, tmp_path, gcs_store):  # noqa: F811
  # 7 MiB in 12 arrays and 3 steps rather than 42 MiB and 5: keeping one, each save after the first still
  # waits for the previous step's deletion.
  overrides = ("num_warmups=0", "checkpoint_config.scale=0.0001", "benchmarks[0].options.num_steps=3")
  out = _run(cli, tmp_path, "repro_delete_stall", "--checkpoint_root", f"{gcs_store.url}/r3488", "--link", "rtt=20ms",
             overrides=overrides)  # fmt: skip
  deletes = "save_blocking_5_inventory/store_delete_count"
  m = _medians(out, deletes)
  keep_all = m["CheckpointManagerBenchmark(max_to_keep=None)"][deletes]
  keep_one = m["CheckpointManagerBenchmark(max_to_keep=1)"][deletes]
  assert keep_one > keep_all  # the previous step's objects are deleted while the next save call waits
