"""What a run does with baselines once its results are on disk."""

from __future__ import annotations

import pathlib

from ckptbench.errors import CkptbenchError
from ckptbench.analysis import capture_baseline
from ckptbench.analysis import compare_to_baseline
from ckptbench.results import Comparison
from ckptbench.storage import is_store_url, read_object


def check_baseline_exists(baseline_path: str | None) -> None:
  """Fails before any benchmark runs when the baseline to compare with is missing."""
  if is_store_url(baseline_path):
    read_object(baseline_path)  # a missing baseline object fails here
  elif baseline_path and not pathlib.Path(baseline_path).is_file():
    raise CkptbenchError(f"baseline file {baseline_path} does not exist (checked before running anything)")


def capture_and_compare(
    out_dir: pathlib.Path,
    *,
    capture_path: str | None,
    label: str | None,
    baseline_path: str | None,
    threshold: float,
) -> tuple[pathlib.Path | None, Comparison | None]:
  """Captures the finished run as a baseline and/or compares it with one.

  Capture happens first, so a run can both refresh one baseline and be judged
  against another. The comparison is also written to OUT/comparison.json.

  Returns:
    (the captured baseline file or None, the comparison or None).

  Raises:
    CkptbenchError: when a baseline cannot be read or written.
  """
  captured = capture_baseline(out_dir, capture_path, label=label) if capture_path else None
  comparison = compare_to_baseline(baseline_path, out_dir, threshold=threshold) if baseline_path else None
  return captured, comparison
