"""Running a suite in-process many times, for the baseline error-rate scripts."""

from __future__ import annotations

import contextlib
import io
import os
import pathlib

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import ckptbench  # noqa: E402
from ckptbench import Comparison, RunSettings, Suite, capture_baseline, compare_to_baseline  # noqa: E402


def run_once(suite: Suite, out: pathlib.Path) -> pathlib.Path:
  """Runs `suite` into `out` (replacing what is there); returns `out`."""
  with contextlib.redirect_stdout(io.StringIO()):  # the runner's progress lines
    settings = RunSettings(
        output_dir=out, overwrite=True, show_progress=False, remove_repeated_dir=True,
        probe_storage=False, write_views=False, devices=8,
    )
    outcome = ckptbench.run(suite, settings)
  if outcome.exit_code:
    raise SystemExit(f"the suite failed in {out} (exit code {outcome.exit_code})")
  return out


def compare_runs(baseline_out: pathlib.Path, current_out: pathlib.Path, work: pathlib.Path) -> Comparison:
  """Captures `baseline_out` as a baseline and compares `current_out` with it."""
  baseline = capture_baseline(baseline_out, work / "baselines", label=baseline_out.name)
  return compare_to_baseline(baseline, current_out)


def load(text: str) -> Suite:
  return ckptbench.load_suite_text(text, file="<script>")
