"""torchax: the article's model trained and checkpointed every few steps, through Orbax's manager
on torchax, torch.save and DCP; the torchax flow itself in the environment its extra builds."""

from __future__ import annotations

import json
import pathlib
import subprocess
import textwrap

import pytest

pytest.importorskip("torch", reason="the torch extra is not installed (pip install 'ckptbench[torch]')")

from builtin_support import corrupt_before, errors, ok_metrics, run_text  # noqa: E402
from ckptbench.benchmarks.torchax_training import TorchaxOptions  # noqa: E402
from ckptbench.envs import build_env, parse_with  # noqa: E402
from ckptbench.envs._build import isolated_environ  # noqa: E402
from ckptbench.errors import CkptbenchError  # noqa: E402
from conftest import timed_records  # noqa: E402

LIBRARIES = ["torchax_orbax", "torch_save", "dcp"]


def _check_the_flow(by_library: dict[str, dict], saved_steps: int) -> None:
  for library, m in by_library.items():
    assert m["save_9_other/saved_steps"].value == saved_steps, library
    assert m["save_9_other/parameters"].value == 784 * 120 + 120 + 120 * 84 + 84 + 84 * 10 + 10, library
    assert m["save_0_basics/count"].value == saved_steps, library
    for op in ("train_step", "save", "save_blocking", "restore", "verify"):
      assert m[f"{op}_0_basics/time_s"].value > 0, (library, op)
    assert m["save_blocking_0_basics/time_s"].value <= m["save_0_basics/time_s"].value, library


def test_torch_save_and_dcp_train_save_every_n_steps_keep_three_and_restore_the_weights(tmp_path):
  outcome = run_text(tmp_path, f"""\
      suite_name: t
      benchmarks:
        - generator: torchax
          options: {{library: {LIBRARIES}, num_steps: 8, save_interval_steps: 2, max_to_keep: 3, batch_size: 4}}
      """)
  by_library = {r.options["library"]: m for r, m in zip(outcome.records, ok_metrics(outcome))}
  runnable = {lib for lib in LIBRARIES if TorchaxOptions(library=lib).unsupported_reason() is None}
  assert set(by_library) == runnable >= {"torch_save", "dcp"}
  _check_the_flow(by_library, saved_steps=4)
  if "torchax_orbax" not in runnable:  # torch 2.13 beside torchax: skipped, naming the import error
    [skipped] = outcome.summary.unsupported
    assert "torchax does not import" in skipped.reason


def test_options_refuse_what_would_save_nothing():
  assert TorchaxOptions(library="torch_save", num_steps=2, save_interval_steps=3).invalid_reason() == (
      "save_interval_steps 3 > num_steps 2: nothing would be saved"
  )
  assert "library must be one of" in TorchaxOptions(library="jax").invalid_reason()
  assert "step_prefix" in TorchaxOptions(step_prefix="a/b").invalid_reason()


def test_a_restore_that_reads_other_weights_fails_the_run(tmp_path):
  # Measured blocks with the default collectors: save and save_blocking per save (2 saves), then
  # restore (the 5th): the latest step's file is replaced by the first step's before it is read.
  def roll_back() -> bool:
    steps = sorted((tmp_path / "out").rglob("step_*/model.pt"), key=lambda p: int(p.parent.name.split("_")[1]))
    steps[-1].write_bytes(steps[0].read_bytes())
    return len(steps) == 2

  with corrupt_before(5, roll_back):
    outcome = run_text(tmp_path, """\
        suite_name: t
        benchmarks:
          - generator: torchax
            options: {library: torch_save, num_steps: 4, save_interval_steps: 2, max_to_keep: 3, batch_size: 4}
        """)
  [(kind, message)] = errors(outcome)
  assert kind == "DataMismatchError" and "library=torch_save" in message
  assert "restored global_step 2, expected 4" in message


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the first build downloads torch 2.12.1 (a CUDA build) and its CUDA wheels
def test_the_torchax_example_runs_the_article_flow_in_the_environment_of_its_extra(tmp_path):
  try:
    env = build_env(parse_with("ckptbench[torchax]"))  # cached like `run --with "ckptbench[torchax]"`
  except CkptbenchError as e:
    pytest.skip(f"the torchax environment cannot be built here: {e}")
  out = tmp_path / "out"
  done = subprocess.run(
      [str(env.path / "bin" / "ckptbench"), "run", "torchax", "-o", str(out), "--no-views", "--set", "num_repeats=1",
       "--set", "num_warmups=0"],
      env=isolated_environ(), capture_output=True, text=True, timeout=600,
  )  # fmt: skip
  assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
  records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  measured = {r["options"]["library"]: r for r in timed_records(out)}
  assert set(measured) == set(LIBRARIES) and not any(r["error"] for r in records)
  for library, record in measured.items():
    m = record["metrics"]
    assert m["save_9_other/saved_steps"]["value"] == 3 and m["save_0_basics/count"]["value"] == 3, library
    assert m["save_0_basics/time_s_mean"]["value"] > 0 and m["restore_0_basics/time_s"]["value"] > 0, library
  assert any("torch.jax.current_stream()" in note for note in measured["dcp"]["notes"])  # DCP beside torchax
  versions = json.loads((out / "manifest.json").read_text())["versions"]
  assert versions.get("torch", "").startswith("2.12.1"), versions


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the first build downloads torch 2.12.1 (a CUDA build) and its CUDA wheels
@pytest.mark.host_memory("inline", reason=(
    "what is checked is DCP in the timed runs' process after torchax; a memory pass would start torch,"
    " torchax and JAX again in a fresh process, which the example's test above already does in this environment"
))
def test_pytorch_dcp_saves_after_torchax_in_the_same_process_and_refuses_copy_ahead(tmp_path):
  # torchax registers its device as torch's accelerator: dist.barrier() and DCP's copy-ahead writer fail then.
  try:
    env = build_env(parse_with("ckptbench[torchax]"))
  except CkptbenchError as e:
    pytest.skip(f"the torchax environment cannot be built here: {e}")
  suite = tmp_path / "beside.yaml"
  suite.write_text(textwrap.dedent("""\
      suite_name: beside
      num_repeats: 1
      num_warmups: 0
      checkpoint_config: {spec: {w: {dtype: float32, shape: [256, 64]}}}
      benchmarks:
        - generator: pytorch
          options: {library: [torchax, dcp, dcp_async]}
        - generator: pytorch
          options: {library: dcp, save_per_thread_copy_ahead_mb: 1}
      """))
  out = tmp_path / "out"
  done = subprocess.run(
      [str(env.path / "bin" / "ckptbench"), "run", str(suite), "-o", str(out), "--no-views", "--no-progress"],
      env=isolated_environ(), capture_output=True, text=True, timeout=600,
  )  # fmt: skip
  assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]  # the copy-ahead run failed
  assert "Traceback" not in done.stderr
  by_library = {(r["options"]["library"], r["options"]["save_per_thread_copy_ahead_mb"]): r for r in timed_records(out)}
  for library in ("torchax", "dcp", "dcp_async"):
    assert by_library[library, None]["error"] is None, by_library[library, None]["error"]
    assert by_library[library, None]["metrics"]["verify_0_basics/time_s"]["value"] > 0  # loaded back and compared
  for library in ("dcp", "dcp_async"):
    assert any("per_thread_copy_ahead=0" in note for note in by_library[library, None]["notes"])
  refused = by_library["dcp", 1]["error"]
  assert "save_per_thread_copy_ahead_mb=1 cannot apply in a process that imported torchax" in refused["message"]
  assert "\n" not in refused["message"]


def test_with_names_ckptbench_extras_without_asking_the_index():
  from ckptbench.envs._index import check_released

  check_released(parse_with("ckptbench[torchax]").requirements[0])  # no index lookup, no error
  with pytest.raises(CkptbenchError, match="name only its extras"):
    check_released(parse_with("ckptbench[torchax]==0.1").requirements[0])
