"""What `ckptbench run` does with baselines once a suite has finished."""

from __future__ import annotations

import os
import pathlib

from rich.console import Console

from ckptbench.errors import EXIT_OK
from ckptbench.outputs._baseline import capture_baseline
from ckptbench.outputs._comparison import compare_to_baseline, print_comparison
from ckptbench.outputs._report import REPORT_FILE, write_report
from ckptbench.stats import DEFAULT_THRESHOLD


def finish_baselines(
    out_dir: str | os.PathLike,
    *,
    capture_path: str | os.PathLike | None = None,
    label: str | None = None,
    baseline_path: str | os.PathLike | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    fail_on_regression: bool = False,
    console: Console | None = None,
) -> int:
  """Captures the finished run as a baseline and/or compares it with one.

  Call it on the writing process only (process 0), after results.jsonl and
  manifest.json are complete. Capture happens before the comparison, so a run
  can both refresh one baseline and be judged against another.

  Args:
    out_dir: the run's output directory.
    capture_path: `--baseline_capture_path` (or the suite's key): write
      `<capture_path>/<label>.json`; None skips capturing.
    label: `--baseline_label`; None resolves the git sha.
    baseline_path: `--baseline_path` (or the suite's key): compare with this
      file, print the table, write OUT/comparison.json and rewrite
      OUT/report.html (when there is one) with its comparison section; None
      skips it.
    threshold: `--regression_threshold`.
    fail_on_regression: `--fail_on_regression`.
    console: where the table goes (default: stdout, wide off a terminal).

  Returns:
    `EXIT_REGRESSION` (3) when asked to fail and a headline metric regressed, else 0.

  Raises:
    CkptbenchError: when the baseline cannot be read or written.
  """
  if capture_path is not None:
    path = capture_baseline(out_dir, capture_path, label=label)
    (console.print if console else print)(f"baseline captured: {path}")
  if baseline_path is None:
    return EXIT_OK
  comparison = compare_to_baseline(baseline_path, out_dir, threshold=threshold)
  print_comparison(comparison, console)
  if (pathlib.Path(out_dir) / REPORT_FILE).exists():
    write_report(out_dir)  # again, now with its baseline comparison section
  return comparison.exit_code(fail_on_regression)
