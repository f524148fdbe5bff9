"""Hostile suites and command lines: YAML that expands without bound (aliases, merge keys, nesting,
recursion) is refused in one line before anything builds it, bounded in time and memory; a module
beside a suite cannot replace an installed library; a store URL cannot stage results outside the
staging folder; a history that is a file and a full disk are one line before anything runs."""

from __future__ import annotations

import os
import pathlib
import re
import resource
import subprocess
import time

import pytest
from conftest import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from ckptbench.cli import main
from ckptbench.config import load_suite_text
from ckptbench.errors import CkptbenchError, ConfigError
from ckptbench.results import output_lock

_FAST = settings(max_examples=25, deadline=None)


def _alias_bomb(width: int, levels: int, merge: bool) -> str:
  """`levels` anchors, each naming the one before `width` times: width**levels values once expanded."""
  if merge:
    lines = ["m0: &m0 {" + ", ".join(f"k{i}: {i}" for i in range(width)) + "}"]
    lines += [f"m{n}: &m{n} {{<<: [{', '.join([f'*m{n - 1}'] * width)}]}}" for n in range(1, levels + 1)]
  else:
    lines = ["a0: &a0 [" + ", ".join("x" * width) + "]"]
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * width)}]" for n in range(1, levels + 1)]
  return "\n".join(lines) + "\nsuite_name: bomb\n"


def _nested(depth: int, flow: bool) -> str:
  if flow or depth > 500:  # a block list 500 deep is near the 256 KiB a suite file may be
    return "suite_name: deep\nx: " + "[" * depth + "]" * depth + "\n"
  return "suite_name: deep\nx:\n" + "".join(" " * i + "- \n" for i in range(1, depth + 1))


def _refused_quickly(text: str, words: str) -> None:
  start = time.perf_counter()
  with pytest.raises(ConfigError, match=words) as raised:
    load_suite_text(text, "s.yaml")
  assert time.perf_counter() - start < 15
  assert "\n" not in str(raised.value) and str(raised.value).startswith("s.yaml")


@_FAST
@given(width=st.integers(3, 12), levels=st.integers(6, 10), merge=st.booleans())
def test_aliases_that_expand_past_the_bound_are_refused_before_they_are_built(width, levels, merge):
  if width**levels <= 200_000:  # below the bound (100,000 values, keys and containers counted) it is a suite
    return
  _refused_quickly(_alias_bomb(width, levels, merge), r"s\.yaml:\d+: expands to more than 100,000 values")


@_FAST
@given(depth=st.integers(65, 6000), flow=st.booleans())
def test_nesting_past_64_levels_is_refused_from_the_parser_events(depth, flow):
  _refused_quickly(_nested(depth, flow), r"s\.yaml:\d+: nested more than 64 levels deep")


@_FAST
@given(link=st.integers(2, 60), links=st.integers(3, 100))
def test_aliases_that_stack_shallow_nodes_past_64_levels_are_refused(link, links):
  if link * links <= 64:
    return
  lines = ["a0: &a0 " + "[" * link + "]" * link]
  lines += [f"a{i}: &a{i} " + "[" * link + f"*a{i - 1}" + "]" * link for i in range(1, links)]
  _refused_quickly("\n".join(lines) + "\n", r"s\.yaml:\d+: nested more than 64 levels deep once aliases expand")


@pytest.mark.parametrize("text", ["x: &a [1, *a]\n", "x: &a {b: *a}\n", "x: &a {b: [c, {d: *a}]}\n",
                                  "x: &a {<<: *a}\n", "&a [*a]\n"])  # fmt: skip
def test_a_recursive_alias_is_refused(text):
  _refused_quickly(text, "recursive alias")


def test_override_values_are_bounded_as_suites_are():
  lines = _alias_bomb(10, 7, merge=False).splitlines()[:-1]
  value = "{" + ", ".join(lines) + "}"  # the bomb as one flow mapping
  with pytest.raises(CkptbenchError, match=r"--set num_repeats=.*: the value is not valid YAML \(expands to more than"):
    load_suite_text("suite_name: s\n", "s.yaml", overrides=[f"num_repeats={value}"])


@pytest.mark.slow
def test_the_reported_alias_bomb_is_one_line_in_bounded_time_and_memory(tmp_path):
  suite = tmp_path / "bomb.yaml"
  suite.write_text(_alias_bomb(9, 9, merge=False))
  assert len(suite.read_bytes()) < 700
  start = time.perf_counter()
  done = run_cli("plan", str(suite), timeout=60)
  took = time.perf_counter() - start
  peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
  assert done.returncode == 2 and done.stderr.strip().count("\n") == 0, done.stderr
  assert re.search(r"bomb\.yaml:\d+: expands to more than 100,000 values", done.stderr)
  assert took < 15 and peak_kib < 1 << 20, (took, peak_kib)


# -- modules beside a suite
_LIBRARY_STANDIN = "import pathlib\npathlib.Path(__file__).with_name('SHADOWED').write_text(__name__)\n"
_GENERATOR = """\
import dataclasses, time
import ckptbench
import helper_beside  # a module of the user's, found beside the suite

@dataclasses.dataclass(frozen=True)
class Options(ckptbench.BenchmarkOptions):
  n: int | list[int] = 1

@ckptbench.benchmark_options(Options)
class Bench(ckptbench.BenchmarksGenerator):
  def test_fn(self, context):
    import orbax.checkpoint, jax, yaml, numpy  # the installed libraries
    assert hasattr(orbax.checkpoint, "args") and helper_beside.VALUE == 7
    metrics = ckptbench.Metrics()
    with metrics.measure("save"):
      time.sleep(0.001)
    return ckptbench.TestResult(metrics=metrics)
"""
_SUITE = """\
suite_name: beside
num_repeats: 1
num_warmups: 0
checkpoint_config:
  spec: {params: {dtype: float32, shape: [8], sharding: [data]}}
mesh_config: {mesh_axes: [data], ici_parallelism: {data: 1}}
benchmarks:
  - generator: my_generators.Bench
"""


@pytest.mark.slow
def test_a_library_named_module_beside_a_suite_or_in_the_cwd_never_replaces_the_installed_one(tmp_path):
  suites, cwd = tmp_path / "suites", tmp_path / "cwd"
  for folder in (suites, cwd):
    folder.mkdir()
    for name in ("orbax", "jax", "yaml", "numpy", "pydantic", "tensorstore"):
      (folder / f"{name}.py").write_text(_LIBRARY_STANDIN)
  (suites / "my_generators.py").write_text(_GENERATOR)
  (suites / "helper_beside.py").write_text("VALUE = 7\n")
  (suites / "suite.yaml").write_text(_SUITE)
  done = run_cli("run", str(suites / "suite.yaml"), "-o", str(tmp_path / "out"), cwd=cwd,
                 env={"CKPTBENCH_HOST_MEMORY": "pass"})  # the memory pass's child process imports the suite too
  assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
  assert not list(tmp_path.rglob("SHADOWED"))
  assert '"error": null' in (tmp_path / "out" / "results.jsonl").read_text()


# -- store URLs and staging
@_FAST
@given(parts=st.lists(st.sampled_from(["..", ".", "a", "", "b.c", "..x", "~"]), min_size=1, max_size=5),
       bucket=st.sampled_from(["bucket", "..", "."]))  # fmt: skip
def test_an_output_url_never_stages_outside_the_staging_folder(parts, bucket):
  from ckptbench.engine import RunSettings
  from ckptbench.engine._settings import STAGING_DIR

  url = f"s3://{bucket}/" + "/".join(parts)
  try:
    settings = RunSettings(output_dir=url)
  except CkptbenchError as e:
    assert "'.' or '..'" in str(e) or "no bucket" in str(e)
    assert ".." in url.split("/") or "." in url.split("/")
    return
  staging = pathlib.Path(STAGING_DIR).resolve()
  assert staging in pathlib.Path(settings.output_dir).resolve().parents


def test_run_into_a_url_with_dot_dot_is_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch):
  monkeypatch.chdir(tmp_path)
  assert main(["run", "quickstart", "-o", "s3://bucket/../../../x"]) == 2
  assert "s3://bucket/../../../x: a bucket or prefix segment is '.' or '..'" in capsys.readouterr().err
  assert list(tmp_path.iterdir()) == [] and not (tmp_path.parent.parent / "x").exists()


def test_run_history_that_is_a_file_is_refused_before_anything_runs(tmp_path, capsys):
  (tmp_path / "hist").write_text("not a directory")
  assert main(["run", "quickstart", "-o", str(tmp_path / "out"), "--history", str(tmp_path / "hist" / "sub")]) == 2
  assert main(["run", "quickstart", "-o", str(tmp_path / "out"), "--history", str(tmp_path / "hist")]) == 2
  err = capsys.readouterr().err
  assert err.count("a history is a directory, and this is a file") == 2 and not (tmp_path / "out").exists()


# -- a disk already full
@pytest.fixture
def full_disk(tmp_path):
  """A 64 KiB tmpfs, filled (needs root and a mount namespace that allows it)."""
  mount = tmp_path / "full"
  mount.mkdir()
  if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)]).returncode:
    pytest.skip("needs root to mount a small tmpfs")
  try:
    with open(mount / "filler", "wb", buffering=0) as f:
      try:
        while True:
          f.write(b"\0" * 4096)
      except OSError:  # full
        pass
    yield mount
  finally:
    subprocess.run(["umount", str(mount)], check=True)


def test_a_disk_already_full_when_out_is_created_is_one_line_and_leaves_nothing(full_disk):
  out = full_disk / "out"
  with pytest.raises(CkptbenchError, match=r"output directory .*/out cannot be written: No space left on device"):
    with output_lock(out, "run"):
      pass
  assert not out.exists()
