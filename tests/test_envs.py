"""Environments across Orbax releases: specs, the package index, `matrix`, `run --with`, `bisect`.

The slow tests build real uv environments with the oldest and the newest supported
orbax-checkpoint (cached under $CKPTBENCH_ENV_CACHE when set, else a pytest temporary
directory) and ask the real package index; nothing stands in for either.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import pathlib
import sys

import pytest
from packaging.version import Version

from ckptbench.config import load_suite_text
from ckptbench.envs import parse_with, unique_labels
from ckptbench.results import LOCK_FILE
from ckptbench.envs._build import project_fingerprint
from ckptbench.envs._index import nearest
from ckptbench.envs._run_with import without_with
from ckptbench.errors import CkptbenchError
from ckptbench.engine._sweep import expand
from ckptbench.stats import AUTO_LOOKS
from conftest import timed_records

OLDEST, NEWEST = "0.11.30", "0.12.8"  # the supported range's ends (pyproject.toml, docs/versions.md)

# save_concurrent_gb needs Orbax's MemoryOptions (0.11.35+): unsupported on the oldest release.
TINY_SUITE = """\
suite_name: tiny across releases
num_repeats: 2
checkpoint_config:
  spec:
    params: {dtype: bfloat16, shape: [256, 256], sharding: [fsdp]}
mesh_config:
  mesh_axes: ["fsdp"]
  ici_parallelism: {"fsdp": 2}
benchmarks:
  - generator: save_restore
    options:
      save_concurrent_gb: [null, 1]
  - generator: checkpoint_manager
    options: {num_steps: 2}
"""


def test_with_values_parse_into_labelled_specs():
  spec = parse_with("orbax-checkpoint==0.12.7 jax==0.10.2")
  assert [str(r) for r in spec.requirements] == ["orbax-checkpoint==0.12.7", "jax==0.10.2"]
  assert spec.label == "orbax-checkpoint-0.12.7_jax-0.10.2"
  assert parse_with("orbax-checkpoint>=0.12,<0.13").label == "orbax-checkpoint_0.12_0.13"
  same = unique_labels([parse_with("orbax-checkpoint==0.12.8")] * 2)
  assert [s.label for s in same] == ["orbax-checkpoint-0.12.8", "orbax-checkpoint-0.12.8_2"]
  assert same[0].cache_key("p") == same[1].cache_key("p") != same[0].cache_key("other project")
  with pytest.raises(CkptbenchError, match="not a requirement specifier"):
    parse_with("orbax-checkpoint==")


def test_two_checkouts_never_share_an_environment(tmp_path):
  # An environment installs ckptbench editable from the tree that built it: one cached
  # for another checkout (perhaps deleted since) would run that checkout's code, or none.
  pyproject = pathlib.Path(__file__).resolve().parents[1] / "pyproject.toml"
  first, second = tmp_path / "first", tmp_path / "second"
  for tree in (first, second):
    tree.mkdir()
    (tree / "pyproject.toml").write_bytes(pyproject.read_bytes())
  assert project_fingerprint(first) == project_fingerprint(first)
  assert project_fingerprint(first) != project_fingerprint(second)


def test_nearest_versions_are_those_around_the_wanted_one():
  versions = tuple(Version(v) for v in ("0.11.39", "0.11.40", "0.12.0", "0.12.1", "0.12.2"))
  assert [str(v) for v in nearest(versions, Version("0.11.99"))] == ["0.11.39", "0.11.40", "0.12.0", "0.12.1"]
  assert [str(v) for v in nearest(versions, Version("0.13"))] == ["0.12.1", "0.12.2"]


def test_run_with_drops_only_its_own_flag():
  argv = ["run", "s.yaml", "--with", "orbax-checkpoint==0.12.7", "-o", "out", "--with=x"]
  assert without_with(argv) == ["run", "s.yaml", "-o", "out"]


def test_probe_reports_the_installed_orbax():
  import ckptbench

  caps = ckptbench.orbax_capabilities()  # CI runs this under the oldest and the newest release
  assert caps.version == importlib.metadata.version("orbax-checkpoint")
  is_012 = Version(caps.version) >= Version("0.12")
  assert caps.v1_api and caps.v1_save_load == is_012 and caps.v1_context_sections == is_012
  assert {"use_ocdbt", "use_compression"} <= caps.options["saving"]
  assert caps.missing_options({"saving": {"use_ocdbt": False}}) is None
  assert "saving.no_such_option" in caps.missing_options({"saving": {"no_such_option": 1}})
  assert (caps.missing(("v1_save_load",)) is None) == is_012
  settings = {"saving": {"use_ocdbt": False, "storage_options.chunk_byte_size": 1 << 20}}
  has_memory = "write_concurrent_bytes" in caps.options["memory"]  # 0.11.35+
  if has_memory:
    settings["memory"] = {"write_concurrent_bytes": 1 << 30}
  else:
    with pytest.raises(ValueError, match="memory.write_concurrent_bytes"):
      ckptbench.orbax_v1_context({**settings, "memory": {"write_concurrent_bytes": 1}})
  ctx = ckptbench.orbax_v1_context(settings)
  array = ctx.array if is_012 else ctx.array_options
  assert array.saving.use_ocdbt is False
  assert array.saving.storage_options.chunk_byte_size == 1 << 20
  if has_memory:
    assert (ctx.memory if is_012 else ctx.memory_options).write_concurrent_bytes == 1 << 30


def test_a_combination_the_release_lacks_is_planned_as_unsupported(monkeypatch):
  import ckptbench

  caps = ckptbench.orbax_capabilities()
  older = type(caps)(**{**caps.__dict__, "version": "0.11.30", "options": {**caps.options, "memory": frozenset()}})
  # (`ckptbench.run` is the function, so the module is named through sys.modules)
  monkeypatch.setattr(sys.modules["ckptbench.engine._sweep"], "orbax_capabilities", lambda: older)
  monkeypatch.setattr("ckptbench.orbax_capabilities", lambda: older)  # what the built-in asks
  plan = expand(load_suite_text(TINY_SUITE, "tiny.yaml"), 2)
  assert [b.varying for b in plan.benchmarks] == [{"save_concurrent_gb": None}, {}]
  [(generator, options, reason)] = plan.unsupported
  assert generator == "SaveRestoreBenchmark" and options["save_concurrent_gb"] == 1.0
  assert reason == "orbax-checkpoint 0.11.30 lacks the option(s) memory.write_concurrent_bytes"


@pytest.fixture(scope="module")
def env_cache(tmp_path_factory) -> dict[str, str]:
  cache = os.environ.get("CKPTBENCH_ENV_CACHE") or str(tmp_path_factory.mktemp("env-cache"))
  return {"CKPTBENCH_ENV_CACHE": cache}


@pytest.fixture
def tiny_suite(tmp_path) -> pathlib.Path:
  path = tmp_path / "tiny.yaml"
  path.write_text(TINY_SUITE)
  return path


@pytest.fixture
def one_repeat_suite(tmp_path) -> pathlib.Path:
  """The tiny suite with one repeat: one round per environment, where rounds are not the point."""
  path = tmp_path / "once.yaml"
  path.write_text(TINY_SUITE.replace("num_repeats: 2", "num_repeats: 1"))
  return path


@pytest.mark.slow
def test_unknown_package_or_version_is_one_line_naming_the_nearest(cli, tiny_suite, tmp_path, env_cache):
  out = tmp_path / "out"
  done = cli("matrix", str(tiny_suite), "--with", "orbax-checkpoint==0.12.99", "-o", str(out), env=env_cache)
  assert done.returncode == 2, done.stderr
  assert done.stderr.strip() == (
      "ckptbench: error: orbax-checkpoint 0.12.99 is not a released version; nearest: 0.12.7, 0.12.8"
  )
  done = cli("matrix", str(tiny_suite), "--with", "no-such-package-ckptbench==1.0", "-o", str(out), env=env_cache)
  assert done.returncode == 2
  assert len(done.stderr.strip().splitlines()) == 1
  assert "'no-such-package-ckptbench' was not found on the package index" in done.stderr
  assert not out.exists()  # nothing written


@pytest.mark.slow
def test_matrix_oldest_and_newest_interleaved_with_a_failed_build(cli, tiny_suite, tmp_path, env_cache):
  out = tmp_path / "matrix"
  done = cli(
      "matrix", str(tiny_suite), "-o", str(out),
      "--with", f"orbax-checkpoint=={OLDEST}",
      "--with", "orbax-checkpoint==0.11.20",  # released, but outside ckptbench's range: uv refuses
      "--with", f"orbax-checkpoint=={NEWEST}",
      env=env_cache, timeout=900,
  )  # fmt: skip
  assert done.returncode == 1, done.stdout + done.stderr  # one environment failed
  build_lines = [line for line in done.stdout.splitlines() if "failed to build" in line]
  assert len(build_lines) == 1 and "orbax-checkpoint-0.11.20" in build_lines[0]
  assert "orbax-checkpoint>=0.11.30" in build_lines[0]  # the installer's own words
  assert "Traceback" not in done.stdout + done.stderr
  old, new = out / f"orbax-checkpoint-{OLDEST}", out / f"orbax-checkpoint-{NEWEST}"
  assert sorted(p.name for p in out.iterdir() if p.name != LOCK_FILE) == ["comparison.json", old.name, new.name, "report.html"]

  for directory, version in ((old, OLDEST), (new, NEWEST)):
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["versions"]["orbax-checkpoint"] == version
    assert manifest["versions"]["jax"] and manifest["versions"]["tensorstore"]
  old_summary = json.loads((old / "summary.json").read_text())
  assert [u["options"]["save_concurrent_gb"] for u in old_summary["unsupported"]] == [1.0]
  assert "MemoryOptions" not in json.dumps(old_summary)  # a reason, not a traceback
  new_summary = json.loads((new / "summary.json").read_text())
  assert new_summary["unsupported"] == [] and len(new_summary["benchmarks"]) == 3
  assert len(old_summary["benchmarks"]) == 2  # checkpoint_manager runs on the oldest too

  # Interleaved rounds: repeat r of every environment before repeat r+1 of any.
  a, b = _starts(old), _starts(new)
  assert max(a[0], b[0]) <= min(a[1], b[1])
  # A fixed num_repeats: that many rounds, one look.
  assert json.loads((out / "comparison.json").read_text())["repeats"]["stopped"] == "fixed"

  document = json.loads((out / "comparison.json").read_text())
  assert document["reference"] == old.name
  assert [e["status"] for e in document["environments"]] == ["ok", "build_failed", "ok"]
  rows = document["comparisons"][new.name]["rows"]
  assert any(r["metric"] == "save_0_basics/time_s" and r["ratio"] for r in rows)
  assert (new / "comparison.json").is_file() and "baseline comparison" in (new / "report.html").read_text()
  page = (out / "report.html").read_text()  # every environment on one page, headline metrics side by side
  assert f"<a href='{old.name}/report.html'>{old.name}</a> (reference)" in page
  assert "orbax-checkpoint-0.11.20" in page and "build_failed" in page
  assert f"{new.name}: median, ratio [interval]" in page and "save_0_basics/time_s" in page

  # The cache: a second matrix builds nothing. Its --set reaches every environment's run (one repeat).
  again = cli("matrix", str(tiny_suite), "--set", "num_repeats=1", "-o", str(out), "--overwrite",
              "--with", f"orbax-checkpoint=={NEWEST}", env=env_cache)  # fmt: skip
  assert again.returncode == 0, again.stdout + again.stderr
  assert f"environment orbax-checkpoint-{NEWEST}: cached" in again.stdout
  assert not old.exists()  # --overwrite replaced the earlier matrix
  assert set(_starts(new)) == {0}
  assert json.loads((out / "comparison.json").read_text())["overrides"] == ["num_repeats=1"]


def _starts(directory: pathlib.Path, name_ends: str = "None)") -> dict[int, str]:
  """When each measured repeat of the benchmark whose name ends so started (each run's own record)."""
  records = [json.loads(line) for line in (directory / "results.jsonl").read_text().splitlines()]
  assert all(r["error"] is None for r in records)
  measured = [r for r in timed_records(directory) if r["benchmark"].endswith(name_ends)]
  return {r["repeat"]: r["started_at"] for r in measured}


@pytest.mark.slow
@pytest.mark.host_memory("inline", reason=(
    "the A/A gate over this suite's sub-MiB host memory: the memory pass's two settled readings a side"
    " carry 6 MiB of error each, beyond the 8 MiB floor, so they stay inconclusive (docs/verdicts.md)"
))
def test_the_same_release_twice_at_auto_repeats_is_decided_equivalent_and_passes_the_gate(cli, tmp_path, env_cache):
  """An A/A matrix decides as `run` does: interleaved rounds until every judged comparison is decided at a
  look, on a sweep's judged metrics alone (TensorStore's counters and the like are shown, not gated).

  The threshold is 50%: at this tiny shape (a save of 77 ms) on the shared 2-core machine the per-round
  log ratio's standard deviation was 0.6-1.0, which no budget decides within +-10% (docs/verdicts.md)."""
  suite = tmp_path / "aa.yaml"
  suite.write_text(TINY_SUITE.replace("num_repeats: 2\n", "").split("benchmarks:")[0]
                   + "benchmarks:\n  - generator: save_restore\n")  # fmt: skip
  out = tmp_path / "aa"
  done = cli(
      "matrix", str(suite), "-o", str(out), "--with", f"orbax-checkpoint=={NEWEST}",
      "--with", f"orbax-checkpoint=={NEWEST}", "--fail_on_regression", "--regression_threshold", "0.5",
      "--time_budget_s", "240", env=env_cache, timeout=900,
  )  # fmt: skip
  assert done.returncode == 0, done.stdout[-3000:] + done.stderr
  looks = [line for line in done.stdout.splitlines() if line.startswith("after ")]
  assert looks and looks[-1].endswith("every one decided") and "equivalent at 99.17%" in looks[0]
  document = json.loads((out / "comparison.json").read_text())
  repeats = document["repeats"]
  assert repeats["mode"] == "auto" and repeats["stopped"] == "decided" and repeats["rounds"] in AUTO_LOOKS
  label = f"orbax-checkpoint-{NEWEST}"
  comparison = document["comparisons"][f"{label}_2"]
  headline = sorted(r["metric"] for r in comparison["rows"] if r["judged"])
  judged = sorted(v["metric"] for v in comparison["verdicts"] if v["metric"] in headline)
  assert headline == judged and "save_0_basics/time_s" in headline and len(headline) < 10
  assert not any("tensorstore" in m for m in headline)
  assert all(r["verdict"] == "equivalent" for r in comparison["rows"] if r["judged"])
  assert "per-round (paired)" in comparison["rule"] and comparison["threshold"] == 0.5
  for directory in (out / label, out / f"{label}_2"):
    summary = json.loads((directory / "summary.json").read_text())
    assert summary["repeats"]["driven"] and summary["repeats"]["rounds"] == repeats["rounds"]
    assert summary["repeats"]["stopped"] == "decided"
  a, b = _starts(out / label, "Benchmark"), _starts(out / f"{label}_2", "Benchmark")
  assert sorted(a) == sorted(b) == list(range(repeats["rounds"]))
  assert all(max(a[r], b[r]) <= min(a[r + 1], b[r + 1]) for r in range(repeats["rounds"] - 1))


_MEMORY_PASS_IS_THE_MATRIX_TESTS = pytest.mark.host_memory("inline", reason=(
    "what is checked is the environment's release and the bisection; a memory pass (JAX started again in a"
    " fresh process of the environment) is the matrix test's, in these same environments"
))


@pytest.mark.slow
@_MEMORY_PASS_IS_THE_MATRIX_TESTS
def test_run_with_uses_the_same_environment(cli, one_repeat_suite, tmp_path, env_cache):
  out = tmp_path / "run"
  done = cli("run", str(one_repeat_suite), "--with", f"orbax-checkpoint=={OLDEST}", "-o", str(out), "--no-views",
             env=env_cache, timeout=600)  # fmt: skip
  assert done.returncode == 0, done.stdout + done.stderr
  assert json.loads((out / "manifest.json").read_text())["versions"]["orbax-checkpoint"] == OLDEST


@pytest.mark.slow
@_MEMORY_PASS_IS_THE_MATRIX_TESTS
def test_bisect_measures_bad_against_good_first(cli, one_repeat_suite, tmp_path, env_cache):
  out = tmp_path / "bisect"
  done = cli(
      "bisect", str(one_repeat_suite), "--package", "orbax-checkpoint", "--good", OLDEST, "--bad", NEWEST,
      "--metric", "load_0_basics/time_s", "-o", str(out), env=env_cache, timeout=900,
  )  # fmt: skip
  assert done.returncode == 0, done.stdout + done.stderr
  assert f"step 0: orbax-checkpoint {NEWEST} against {OLDEST}:" in done.stdout
  document = json.loads((out / "bisect.json").read_text())
  candidates = document["candidates"]  # the releases the index lists between them
  assert candidates[0] == OLDEST and candidates[-1] == NEWEST and {"0.11.40", "0.12.0"} <= set(candidates)
  # One repeat (then two) bounds no interval: the step is inconclusive, measured again with twice the
  # repeats, and bisect says it could not decide: no culprit, and never "no regression".
  assert [s["verdict"] for s in document["steps"]] == ["inconclusive", "inconclusive"]
  assert [s["repeats"] for s in document["steps"]] == [1, 2]  # rounds run
  assert document["culprit"] is None and document["undecided"] == NEWEST
  assert "could not decide" in done.stdout and "no regression" not in done.stdout


@pytest.mark.slow
def test_an_environment_that_fails_to_run_leaves_nothing_in_out(cli, tmp_path, env_cache):
  # The suite's generator lives in tests/ (on this process's PYTHONPATH only): the environment,
  # which drops PYTHONPATH so that nothing shadows its own packages, cannot load the suite.
  suite = tmp_path / "foreign.yaml"
  suite.write_text(
      TINY_SUITE.split("benchmarks:")[0].replace("num_repeats: 2", "num_repeats: 1")
      + "benchmarks:\n  - generator: sample_benchmarks.SaveRestoreBenchmark\n"
  )
  out = tmp_path / "out"
  done = cli("matrix", str(suite), "--with", f"orbax-checkpoint=={NEWEST}", "-o", str(out), env=env_cache)
  assert done.returncode == 2, done.stdout + done.stderr  # no environment finished
  failure = [line for line in done.stdout.splitlines() if "failed: ckptbench run exited 2" in line]
  assert len(failure) == 1 and "sample_benchmarks" in failure[0]
  assert "no environment finished the suite" in done.stderr
  # The record of what happened, no half run.
  assert sorted(p.name for p in out.iterdir() if p.name != LOCK_FILE) == ["comparison.json", "report.html"]
  assert "no environment finished" in (out / "report.html").read_text()
  document = json.loads((out / "comparison.json").read_text())
  assert document["environments"][0]["status"] == "run_failed" and document["reference"] is None
