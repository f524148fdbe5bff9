"""Writes src/ckptbench/stats/_scan_table.py: the scan statistic's critical values per series length.

The change-point test (`stats/_change_points.py`) rejects "no change" when the largest pooled t
over a segment's splits exceeds what series of as many normal log medians reach with probability
SCAN_ALPHA (a confirmed change) or EDGE_ALPHA (a segment edge). Drawing that distribution takes
seconds for every length a history meets, so the values are drawn once here, from 200,000 series
per length, and kept; `tests/test_stats_change_points.py` draws a few lengths again to check them.

  python measurements/scan_critical_values.py   # about a minute on two cores
"""

from __future__ import annotations

import pathlib

import numpy as np

from ckptbench.stats._change_points import EDGE_ALPHA, MIN_RUNS, SCAN_ALPHA, WINDOW, largest_split_t

DRAWS = 200_000
_CHUNK = 20_000


def critical_values(runs: int, draws: int = DRAWS, seed: int = 0) -> tuple[float, float]:
  """The (1 - SCAN_ALPHA) and (1 - EDGE_ALPHA) quantiles of the scan statistic of `runs` normal runs."""
  rng = np.random.default_rng(seed * 1000 + runs)
  stats = np.concatenate([largest_split_t(rng.standard_normal((_CHUNK, runs)), MIN_RUNS) for _ in range(draws // _CHUNK)])
  return tuple(float(q) for q in np.quantile(stats, [1.0 - SCAN_ALPHA, 1.0 - EDGE_ALPHA]))


def main() -> None:
  rows = {runs: critical_values(runs) for runs in range(2 * MIN_RUNS, 2 * WINDOW + 1)}
  lines = [
      '"""The scan statistic\'s critical values per series length (runs): written by',
      "measurements/scan_critical_values.py from 200,000 series of normal log medians per length, for",
      'the alphas and the fewest runs a segment holds named below (stats/_change_points.py)."""',
      "",
      f"SCAN_ALPHA = {SCAN_ALPHA!r}",
      f"EDGE_ALPHA = {EDGE_ALPHA!r}",
      f"MIN_RUNS = {MIN_RUNS!r}",
      "# runs: (critical value at SCAN_ALPHA, at EDGE_ALPHA)",
      "CRITICAL = {",
      *(f"    {runs}: ({scan:.4f}, {edge:.4f})," for runs, (scan, edge) in rows.items()),
      "}",
  ]
  target = pathlib.Path(__file__).resolve().parents[1] / "src" / "ckptbench" / "stats" / "_scan_table.py"
  target.write_text("\n".join(lines) + "\n")
  print(f"written: {target}")


if __name__ == "__main__":
  main()
