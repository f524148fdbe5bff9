"""`ckptbench port`: Orbax's 21 generator modules, taken from the installed wheel, port with their imports alone.

The slow test runs some of them end to end; measurements/run_orbax_modules.py runs all 21 and prints the count.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import textwrap

import pytest

from conftest import REPO, run_cli, timed_records
from ckptbench.cli._porting import port_file, port_source
from ckptbench.config._generators import resolve_generator

_spec = importlib.util.spec_from_file_location("run_orbax_modules", REPO / "measurements" / "run_orbax_modules.py")
run_orbax_modules = importlib.util.module_from_spec(_spec)
sys.modules["run_orbax_modules"] = run_orbax_modules  # its dataclasses look their module up
_spec.loader.exec_module(run_orbax_modules)


def test_the_table_lists_every_generator_module_of_the_installed_wheel():
  found = {p.relative_to(run_orbax_modules.FRAMEWORK).as_posix() for p in run_orbax_modules.module_files()}
  assert len(found) == 21
  assert found == {m.source for m in run_orbax_modules.MODULES}


def test_all_21_modules_port_with_only_import_lines_changed_and_resolve_as_generators(tmp_path, monkeypatch):
  monkeypatch.syspath_prepend(str(tmp_path))
  problems = run_orbax_modules.port_all(tmp_path)  # asserts that only import lines changed
  assert problems == {m.source: [] for m in run_orbax_modules.MODULES}
  for module in run_orbax_modules.MODULES:
    name = run_orbax_modules.ported_name(module.source)
    text = (tmp_path / f"{name}.py").read_text()
    assert "orbax.checkpoint._src.testing.benchmarks" not in text
    path, cls = resolve_generator(f"{name}.{module.cls}")
    assert cls.__name__ == module.cls and path == f"{name}.{module.cls}"


def test_a_known_failure_counts_as_expected_only_with_its_own_error_on_every_failed_run():
  known = next(m.expected_failure for m in run_orbax_modules.MODULES if m.expected_failure)
  def outcome(*errors):
    return run_orbax_modules.Outcome("m", "failed", 2, len(errors), "", 1.0, errors)
  assert run_orbax_modules.is_expected(outcome(known.error), known)
  assert not run_orbax_modules.is_expected(outcome(known.error, "Array has been deleted"), known)
  assert not run_orbax_modules.is_expected(outcome(), known)  # exit 1 with no recorded error


def test_orbax_runner_failures_are_read_from_its_closing_error():
  output = textwrap.dedent("""\
      E1126 11:52:03 core.py:283] Test: V0_a raised an exception: Expected step 1 ...
      Traceback (most recent call last):
          raise RuntimeError(exception_message)
      RuntimeError: Benchmark test suite run failed with following errors:
      Test: V0_a, Error: AssertionError('Expected step 1 to be cancelled and not present in all_steps: [1]')
      Test: V0_b, Error: ValueError('x')
      """)  # fmt: skip
  assert run_orbax_modules.orbax_runner_errors(output) == (
      "Test: V0_a, Error: AssertionError('Expected step 1 to be cancelled and not present in all_steps: [1]')",
      "Test: V0_b, Error: ValueError('x')",
  )
  assert run_orbax_modules.orbax_runner_errors("I1126 run_benchmarks.py] finished.\n") == ()


def test_a_module_counts_as_failing_in_orbax_only_when_orbax_runner_fails_it_the_same_way():
  known = next(m.expected_failure for m in run_orbax_modules.MODULES if m.expected_failure)
  ours = run_orbax_modules.Outcome("m", "failed", 2, 1, "", 1.0, (known.error,))
  same = f"Test: V0_a, Error: AssertionError('{known.error}')"
  def orbax_run(returncode, *errors, version="0.12.8"):
    return run_orbax_modules.OrbaxRun(returncode, errors, version, 1.0)
  verdict = run_orbax_modules.failing_in_orbax
  assert verdict(ours, known, orbax_run(1, same), "0.12.8")[0]
  assert "Orbax's own runner (orbax-checkpoint 0.12.8) failed it too" in verdict(ours, known, orbax_run(1, same), "0.12.8")[1]
  assert verdict(ours, known, None, "0.12.8") == (True, verdict(ours, known, None)[1])  # known, not re-checked
  assert "not re-checked" in verdict(ours, known, None)[1]
  assert not verdict(ours, known, orbax_run(0), "0.12.8")[0]  # passes under Orbax's runner: ckptbench's fault
  assert not verdict(ours, known, orbax_run(1, same, "Test: V0_b, Error: ValueError('x')"), "0.12.8")[0]
  assert not verdict(ours, known, orbax_run(1, same, version="0.12.9"), "0.12.8")[0]
  other = run_orbax_modules.Outcome("m", "failed", 2, 1, "", 1.0, ("Array has been deleted",))
  assert not verdict(other, known, orbax_run(1, same), "0.12.8")[0]


def test_port_lists_what_still_needs_a_hand():
  source = textwrap.dedent("""
      import orbax.checkpoint._src.testing.benchmarks.core.core
      from orbax.checkpoint._src.testing.benchmarks.core import (
          core as benchmarks_core,
          metric as metric_lib,
      )
      from orbax.checkpoint._src.testing.benchmarks.core import jax_monitoring_tags
      from orbax.checkpoint._src.testing.benchmarks.core.pytree_utils import assert_pytree_equal, no_such_helper

      GENERATOR = "orbax.checkpoint._src.testing.benchmarks.core.core.NoSuchGenerator"
      metric_lib.NO_SUCH_REGISTRY["x"] = None
      benchmarks_core.NoSuchSuite
      benchmarks_core.TestContext
      # see orbax.checkpoint._src.testing.benchmarks.core
  """)
  result = port_source(source, "mine.py")
  assert result.rewritten == (2, 3, 7, 8, 10)
  assert "from ckptbench.compat.orbax.core import (\n    core as benchmarks_core," in result.ported
  assert "\nimport ckptbench.compat.orbax.core.core\n" in result.ported  # rewritten, and listed: code naming it in full
  assert 'GENERATOR = "ckptbench.compat.orbax.core.core.NoSuchGenerator"' in result.ported
  assert result.needs_hand == (
      "line 2: 'import orbax.checkpoint._src.testing.benchmarks.core.core' without 'as': code naming it in full needs the new name",
      "line 7: ckptbench.compat.orbax.core has no 'jax_monitoring_tags'",
      "line 8: ckptbench.compat.orbax.core.pytree_utils has no 'no_such_helper'",
      "line 10: a string names orbax.checkpoint._src.testing.benchmarks.core.core.NoSuchGenerator:"
      " ckptbench.compat.orbax.core.core has no 'NoSuchGenerator'",
      "line 11: ckptbench.compat.orbax.core.metric has no 'NO_SUCH_REGISTRY' (used as metric_lib.NO_SUCH_REGISTRY)",
      "line 12: ckptbench.compat.orbax.core.core has no 'NoSuchSuite' (used as benchmarks_core.NoSuchSuite)",
      "line 14: names orbax.checkpoint._src.testing.benchmarks outside an import statement or a string:"
      " # see orbax.checkpoint._src.testing.benchmarks.core",
  )
  assert port_source("import os\n").needs_hand == () and not port_source("import os\n").changed


def test_port_points_framework_paths_at_the_users_package_where_it_holds_the_module(tmp_path):
  """A user package laid out as Orbax's benchmarks directory: its generator modules and their tests."""
  package = tmp_path / "mybench"
  (package / "v1").mkdir(parents=True)
  for name in ("__init__.py", "v1/__init__.py", "my_benchmark.py", "v1/my_v1_benchmark.py"):
    (package / name).write_text("")
  test = package / "v1" / "my_v1_benchmark_test.py"
  test.write_text(textwrap.dedent("""\
      from orbax.checkpoint._src.testing.benchmarks import my_benchmark
      from orbax.checkpoint._src.testing.benchmarks.v1 import my_v1_benchmark as bench
      from orbax.checkpoint._src.testing.benchmarks.v1 import benchmark
      import orbax.checkpoint._src.testing.benchmarks.my_benchmark as mine

      @mock.patch('orbax.checkpoint._src.testing.benchmarks.v1.my_v1_benchmark.ocp.save')
      @mock.patch('orbax.checkpoint._src.testing.benchmarks.core.metric.Metrics.report')
      def test(): ...
      """))
  result = port_file(test, write=True)
  assert result.needs_hand == ()
  assert test.read_text() == textwrap.dedent("""\
      from mybench import my_benchmark
      from mybench.v1 import my_v1_benchmark as bench
      from ckptbench.compat.orbax.v1 import benchmark
      import mybench.my_benchmark as mine

      @mock.patch('mybench.v1.my_v1_benchmark.ocp.save')
      @mock.patch('ckptbench.compat.orbax.core.metric.Metrics.report')
      def test(): ...
      """)
  assert result.rewritten == (1, 2, 3, 4, 6, 7)
  # outside a package, or a module the package does not hold: listed, as before
  loose = port_source("from orbax.checkpoint._src.testing.benchmarks import my_benchmark\n", tmp_path / "loose.py")
  assert loose.needs_hand == ("line 1: ckptbench.compat.orbax has no 'my_benchmark'",)
  absent = port_source("from orbax.checkpoint._src.testing.benchmarks.v1 import other\n", test)
  assert absent.needs_hand == ("line 1: ckptbench.compat.orbax.v1 has no 'other'",)


def test_port_flags_attributes_of_orbaxs_framework_classes_the_compat_classes_lack():
  source = textwrap.dedent("""\
      from orbax.checkpoint._src.testing.benchmarks.core import core
      from orbax.checkpoint._src.testing.benchmarks.core import metric as metric_lib
      benchmarks = generator.generate()
      value = result.metrics.results['save::0_basics/time_s']
      metric_lib.TracemallocMetric._active_count = 0
      other.unrelated_attribute
      """)
  assert port_source(source, "mine.py").needs_hand == (
      "line 5: ._active_count is Orbax's TracemallocMetric._active_count,"
      " which ckptbench.compat.orbax.core.metric.TracemallocMetric lacks",
  )


@pytest.mark.slow
def test_the_cli_prints_a_diff_by_default_and_writes_with_write(tmp_path):
  target = tmp_path / "deleter_benchmark.py"
  original = (run_orbax_modules.FRAMEWORK / "deleter_benchmark.py").read_text()
  target.write_text(original)
  dry = run_cli("port", str(target))
  assert dry.returncode == 0, dry.stderr
  assert "-from orbax.checkpoint._src.testing.benchmarks.core import core as benchmarks_core" in dry.stdout
  assert "+from ckptbench.compat.orbax.core import core as benchmarks_core" in dry.stdout
  assert "2 line(s) to rewrite (26, 27)" in dry.stdout and "dry run: nothing written" in dry.stdout
  assert target.read_text() == original
  wrote = run_cli("port", "--write", "--quiet", str(target))
  assert wrote.returncode == 0 and "2 line(s) rewritten (26, 27)" in wrote.stdout and "---" not in wrote.stdout
  assert "from ckptbench.compat.orbax.core import metric as metric_lib" in target.read_text()
  assert not port_file(target).changed  # porting again changes nothing

  needs = tmp_path / "needs.py"
  needs.write_text("from orbax.checkpoint._src.testing.benchmarks.core import jax_monitoring_tags\n")
  assert run_cli("port", str(needs)).returncode == 1
  broken = tmp_path / "broken.py"
  broken.write_text("def (:\n")
  done = run_cli("port", str(broken), str(tmp_path / "absent.py"))
  assert done.returncode == 2 and f"{broken}:1: not valid Python" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
@pytest.mark.host_memory("inline", reason=(
    "what is checked is that the ported modules run (options, sharding file, absl flags, launch); a memory pass"
    " would start each module's ckptbench again in a fresh process, which tests/test_memory_pass.py checks"
))
def test_ported_modules_run_under_ckptbench(tmp_path):
  """From_dict options, an Orbax sharding file and inventory, absl flags under launch -n 2, a CUDA-only module."""
  run_orbax_modules.port_all(tmp_path)
  run_orbax_modules.write_fixtures(tmp_path, only=("orbax8",))
  wanted = {"checkpoint_policy_benchmark", "orbax_load_load_benchmark", "emergency_checkpoint_manager_benchmark",
            "pytorch_checkpoint_benchmark"}  # fmt: skip
  outcomes = {
      o.name: o for o in (run_orbax_modules.run_module(m, tmp_path) for m in run_orbax_modules.MODULES
                          if run_orbax_modules.ported_name(m.source) in wanted)
  }  # fmt: skip
  assert {n: o.status for n, o in outcomes.items()} == {
      "checkpoint_policy_benchmark": "passed", "orbax_load_load_benchmark": "passed",
      "emergency_checkpoint_manager_benchmark": "passed", "pytorch_checkpoint_benchmark": "unsupported",
  }, {n: o.detail for n, o in outcomes.items()}  # fmt: skip
  assert "torch.cuda.set_device" in outcomes["pytorch_checkpoint_benchmark"].detail
  assert outcomes["checkpoint_policy_benchmark"].runs == 3
  records = timed_records(tmp_path / "out" / "orbax_load_load_benchmark")
  assert records and all(r["inventory"]["file_count"] > 0 and r["error"] is None for r in records)


def test_a_run_failing_on_an_import_names_the_missing_package_and_the_environment():
  outcome = run_orbax_modules.Outcome(
      "multihost_dispatchers_benchmark", "failed", 2, 2, 'exit 1; ModuleNotFoundError: No module named "cloudpickle"',
      1.0, ('No module named "cloudpickle"', "No module named 'cloudpickle'"),
  )  # fmt: skip
  hint = run_orbax_modules.missing_package_hint(outcome)
  assert "missing cloudpickle:" in hint and "pathways" in hint
  assert run_orbax_modules.missing_package_hint(run_orbax_modules.Outcome("m", "failed", 1, 1, "exit 1", 1.0)) == ""
