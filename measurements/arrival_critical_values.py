"""Writes src/ckptbench/stats/_arrival_table.py: the arrival test's critical values per reference size.

The arrival test (`stats/_arrival.py`) judges the newest run alone, t1 = (run - reference mean) / (s
sqrt(1 + 1/k)), and the newest three runs by their median, t3 = (median of the three - reference
median) / s, against the `k` runs of their segment before them (s: the reference's standard
deviation). Each critical value is the largest of the statistic's (1 - alpha) quantiles, alpha the
test's share of a side (`GROUP_ALPHAS`: 0.5% the run alone, 0.1% the three), over normal runs (for
t1 Student's t, k - 1 degrees of freedom) and over runs whose spread has heavy tails (Student's t
with 3 degrees of freedom between runs: the odd far run of a shared machine), drawn from 300,000
series per size and kind of run, so each test flags a run with no change at most its share of the
time under either; `tests/test_stats_change_points.py` draws a few again.

  .venv/bin/python measurements/arrival_critical_values.py   # several minutes on two cores
"""

from __future__ import annotations

import pathlib

import numpy as np
import scipy.special

from ckptbench.stats._arrival import ARRIVAL_WINDOW, GROUP_ALPHAS, MIN_REFERENCE_RUNS

DRAWS = 300_000
_CHUNK = 50_000
HEAVY_DEGREES = 3


def statistic(x: np.ndarray, reference: int, group: int) -> np.ndarray:
  """The test's statistic of each row of `x`: `reference` runs, then the group's runs."""
  ref, new = x[:, :reference], x[:, reference:]
  s = ref.std(1, ddof=1)
  if group == 1:
    return (new[:, 0] - ref.mean(1)) / (s * np.sqrt(1 + 1 / reference))
  return (np.median(new, 1) - np.median(ref, 1)) / s


def drawn_quantile(group: int, reference: int, heavy: bool, draws: int = DRAWS) -> float:
  """The (1 - the group's alpha) quantile of the statistic over normal or heavy-tailed runs."""
  rng = np.random.default_rng(group * 1000 + reference * 2 + heavy)
  found = []
  for _ in range(draws // _CHUNK):
    shape = (_CHUNK, reference + group)
    found.append(statistic(rng.standard_t(HEAVY_DEGREES, shape) if heavy else rng.standard_normal(shape), reference, group))
  return float(np.quantile(np.concatenate(found), 1 - GROUP_ALPHAS[group]))


def critical_value(group: int, reference: int) -> float:
  drawn = [drawn_quantile(group, reference, True)]
  if group == 1:  # exact: Student's t
    drawn.append(float(scipy.special.stdtrit(reference - 1, 1 - GROUP_ALPHAS[group])))
  else:
    drawn.append(drawn_quantile(group, reference, False))
  return max(drawn)


def main() -> None:
  rows = {m: [critical_value(m, k) for k in range(MIN_REFERENCE_RUNS, ARRIVAL_WINDOW + 1)] for m in GROUP_ALPHAS}
  lines = [
      '"""The arrival test\'s critical values per group of newest runs and reference size: written by',
      "measurements/arrival_critical_values.py, the largest of the (1 - GROUP_ALPHAS) quantiles over normal",
      'runs and over heavy-tailed runs (t, 3 d.f.), 300,000 series each (stats/_arrival.py)."""',
      "",
      f"GROUP_ALPHAS = {GROUP_ALPHAS!r}",
      f"FIRST_REFERENCE = {MIN_REFERENCE_RUNS!r}",
      "# runs in the group: critical values for references of FIRST_REFERENCE, FIRST_REFERENCE + 1, ... runs",
      "CRITICAL = {",
      *(f"    {m}: ({', '.join(f'{q:.4f}' for q in values)})," for m, values in rows.items()),
      "}",
  ]
  target = pathlib.Path(__file__).resolve().parents[1] / "src" / "ckptbench" / "stats" / "_arrival_table.py"
  target.write_text("\n".join(lines) + "\n")
  print(f"written: {target}")


if __name__ == "__main__":
  main()
