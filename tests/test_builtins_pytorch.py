"""pytorch: the same tensors through torch.save, safetensors, DCP and Orbax."""

from __future__ import annotations

import pathlib

import pytest

pytest.importorskip("torch", reason="the torch extra is not installed (pip install 'ckptbench[torch]')")
pytest.importorskip("safetensors", reason="the torch extra is not installed (pip install 'ckptbench[torch]')")

from builtin_support import corrupt_before, errors, ok_metrics, run_text  # noqa: E402
from ckptbench.benchmarks.pytorch import PyTorchOptions  # noqa: E402
from conftest import timed_records  # noqa: E402

DATA = """\
suite_name: t
checkpoint_config:
  spec:
    w: {dtype: bfloat16, shape: [64, 32], sharding: [fsdp]}
    layer: {b: {dtype: float32, shape: [32]}, step: int}
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 8}}
"""


def test_every_library_saves_and_loads_the_same_tensors(tmp_path):
  outcome = run_text(tmp_path, DATA, """\
      benchmarks:
        - generator: pytorch
          options: {library: [torch_save, safetensors, safetensors_mmap, dcp, dcp_async, orbax, torchax]}
      """)
  metrics = {r.options["library"]: r.metrics for r in outcome.records}
  ok_metrics(outcome)
  assert "torchax" not in metrics or PyTorchOptions(library="torchax").unsupported_reason() is None
  assert {"torch_save", "safetensors", "safetensors_mmap", "dcp", "dcp_async", "orbax"} <= set(metrics)
  for m in metrics.values():
    assert m["save_9_other/tensors"].value == 2
    for op in ("save", "save_blocking", "load", "verify"):
      assert m[f"{op}_0_basics/time_s"].value > 0, op
  assert metrics["dcp_async"]["save_blocking_0_basics/time_s"].value <= metrics["dcp_async"]["save_0_basics/time_s"].value
  for library in ("torch_save", "safetensors", "dcp", "dcp_async"):  # the bytes saved: w (bf16) and b (float32)
    assert metrics[library]["save_5_inventory/save_total_gb"].value * 2**30 == 64 * 32 * 2 + 32 * 4, library
    assert metrics[library]["save_4_throughput/save_total_gbps"].value > 0, library


def test_torchax_is_skipped_with_its_reason_when_it_does_not_import():
  options = PyTorchOptions(library="torchax")
  assert options.is_valid()  # a sound combination, only not runnable here
  if options.unsupported_reason() is None:
    pytest.skip("torchax imports here")
  assert options.unsupported_reason().startswith("torchax does not import")


def _flip_safetensors(root: pathlib.Path) -> bool:
  files = list(root.rglob("model.safetensors"))
  for file in files:
    data = bytearray(file.read_bytes())
    data[-1] ^= 0xFF  # the last byte of the tensor data
    file.write_bytes(bytes(data))
  return bool(files)


def test_check_fails_when_the_file_on_disk_is_wrong(tmp_path):
  # Measured blocks: save, save_blocking, then load (the 3rd).
  with corrupt_before(3, lambda: _flip_safetensors(tmp_path / "out")):
    outcome = run_text(tmp_path, DATA, """\
        benchmarks:
          - generator: pytorch
            options: {library: safetensors}
        """)
  [(kind, message)] = errors(outcome)
  assert kind == "DataMismatchError" and "library=safetensors" in message


ORBAX_DCP = "orbax.checkpoint._src.testing.benchmarks.pytorch_checkpoint_benchmark.PyTorchCheckpointBenchmark"


def test_orbax_pytorch_path_runs_dcp_with_its_writer_options(tmp_path):
  outcome = run_text(tmp_path, DATA, f"""\
      benchmarks:
        - generator: {ORBAX_DCP}
          options: {{enable_async_save: [true, false], single_file_per_rank: [true, false], save_thread_count: [1, 4],
                    save_per_thread_copy_ahead_mb: [1], cache_staged_state_dict: [false], enable_gcs_connector: [false, true]}}
        - generator: pytorch
          options: {{library: torch_save, save_thread_count: 4}}
      """)
  metrics = ok_metrics(outcome)
  assert len(metrics) == 8
  for record, m in zip(outcome.records, metrics):
    assert record.generator == "ckptbench.benchmarks.pytorch.PyTorchCheckpointBenchmark"
    assert m["save_9_other/ranks"].value == 1 and m["load_0_basics/time_s"].value > 0
    assert ("wait_until_finished_0_basics/time_s" in m) == record.options["enable_async_save"]
  reasons = sorted(i.reason for i in outcome.summary.invalid_combinations)
  assert len(reasons) == 9
  assert reasons[-1] == "save_thread_count apply to library dcp or dcp_async, not torch_save"
  assert "Google's DCP connector" in reasons[0]


def _flip_distcp(root: pathlib.Path) -> bool:
  """Inverts a byte in the middle of the largest DCP file: inside the 4 KiB of `w` (framing is at both ends)."""
  files = sorted(root.rglob("*.distcp"), key=lambda f: f.stat().st_size)
  if files:
    data = bytearray(files[-1].read_bytes())
    data[len(data) // 2] ^= 0xFF
    files[-1].write_bytes(bytes(data))
  return bool(files)


def test_dcp_check_fails_when_the_files_on_disk_are_wrong(tmp_path):
  # Measured blocks: save, save_blocking, then load (the 3rd).
  with corrupt_before(3, lambda: _flip_distcp(tmp_path / "out")):
    outcome = run_text(tmp_path, DATA, f"""\
        benchmarks:
          - generator: {ORBAX_DCP}
            options: {{single_file_per_rank: true}}
        """)
  [(kind, message)] = errors(outcome)
  assert kind == "DataMismatchError" and "library=dcp" in message


@pytest.mark.slow
def test_dcp_runs_one_rank_per_process_under_launch(tmp_path, cli):
  (tmp_path / "s.yaml").write_text(DATA + f"""\
num_repeats: 1
benchmarks:
  - generator: {ORBAX_DCP}
    options: {{enable_async_save: [true, false]}}
""")
  done = cli("launch", "-n", "2", str(tmp_path / "s.yaml"), "-o", str(tmp_path / "out"), "--no-views", "--no-probe",
             "--keep_checkpoints")  # fmt: skip
  assert done.returncode == 0, done.stderr[-2000:]
  records = timed_records(tmp_path / "out")  # the first run on the mesh warms up
  assert sorted(r["host"] for r in records) == [0, 0, 1, 1] and not any(r["error"] for r in records)
  assert all(r["metrics"]["save_9_other/ranks"]["value"] == 2 for r in records)
  files = {p.name for p in (tmp_path / "out").rglob("*.distcp")}
  assert {"__0_0.distcp", "__1_0.distcp"} <= files  # both ranks wrote their shards


def test_dcp_saves_the_tensors_of_a_safetensors_reference(tmp_path):
  from ckptbench.data import write_fixture

  (tmp_path / "prepare.yaml").write_text(
      "suite_name: p\ncheckpoint_config: {preset: mistral-7b, scale: 0.0002}\n"
      "mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 8}}\nbenchmarks: [{generator: pytorch_dcp}]\n"
  )
  written = write_fixture(str(tmp_path / "prepare.yaml"), tmp_path / "fx", "safetensors", shard_mb=2)
  outcome = run_text(tmp_path, f"""\
      suite_name: t
      benchmarks:
        - generator: pytorch_dcp
          options: {{reference_checkpoint_path: {written['checkpoint']}}}
      """)
  (m,) = ok_metrics(outcome)
  assert m["save_9_other/tensors"].value == 21  # every tensor of the 2-layer preset
  assert m["load_0_basics/time_s"].value > 0 and "verify_0_basics/time_s" in m
