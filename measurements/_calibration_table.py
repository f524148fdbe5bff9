"""The pure parts of the calibration harness (`calibration.py`): rows of planted against measured
values with a stated tolerance per metric family, the table they print as, and the growth laws
recovered from synthetic host counts through `scale`'s model.

A row passes when every repeat's measured value lies within the tolerance of the planted one:
a median that passes while one repeat reads 0 is not a calibrated metric.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from typing import Callable, Mapping, Sequence

from ckptbench.stats import check_largest, predict, select_law


@dataclasses.dataclass(frozen=True)
class Tolerance:
  """How far a measured value may lie from the planted one: a fraction of it, or an amount in
  the row's unit (for a planted 0 or an amount that noise sets), and why that much."""

  relative: float | None = None
  absolute: float | None = None
  why: str = ""

  def __post_init__(self):
    if (self.relative is None) == (self.absolute is None):
      raise ValueError("a tolerance is relative or absolute, exactly one of them")

  def allows(self, planted: float, measured: float) -> bool:
    limit = self.absolute if self.absolute is not None else abs(planted) * self.relative
    return math.isfinite(measured) and abs(measured - planted) <= limit

  def describe(self, unit: str) -> str:
    if self.relative == 0:
      return "exact"
    return f"±{self.relative:.0%}" if self.relative is not None else f"±{self.absolute:g} {unit}"


# The tolerance of each family, stated before measuring.
TOLERANCES: Mapping[str, Tolerance] = {
    "time": Tolerance(relative=0.05, why="a sleep overshoots by the scheduler's delay, a few ms on a busy machine"),
    "bytes": Tolerance(relative=0.01, why="exact counts of array bytes; chunk and metadata framing only"),
    "throughput": Tolerance(relative=0.05, why="bytes are exact; the block's time carries the sleep's overshoot"),
    "memory": Tolerance(relative=0.15, why="the issue's bar: 64 MiB reads 64 ± 15% in every repeat"),
    "leak": Tolerance(absolute=1.5, why="the issue's bar: 8 MiB per save reads 8 ± 1.5, no leak 0 ± 1.5"),
    "leak interval": Tolerance(absolute=0.0, why="the issue's bar: no leak reads an interval containing 0"),
    "requests": Tolerance(relative=0.0, why="counts through the link are exact"),
    "scale law": Tolerance(relative=0.10, why="the issue's bar for predictions from exact counts"),
}


@dataclasses.dataclass(frozen=True)
class Row:
  """One planted effect and what the metrics read, each repeat."""

  family: str
  what: str  # the planting and the metric read
  unit: str
  planted: float
  measured: tuple[float, ...]
  tolerance: Tolerance

  @property
  def median(self) -> float:
    return statistics.median(self.measured) if self.measured else math.nan

  @property
  def ratio(self) -> float | None:
    """measured / planted (the median's); None for a planted 0."""
    return self.median / self.planted if self.planted else None

  @property
  def passes(self) -> bool:
    return bool(self.measured) and all(self.tolerance.allows(self.planted, m) for m in self.measured)


def row(family: str, what: str, unit: str, planted: float, measured: Sequence[float]) -> Row:
  """A row with its family's stated tolerance."""
  return Row(family, what, unit, planted, tuple(float(m) for m in measured), TOLERANCES[family])


def interval_row(family: str, what: str, unit: str, lows: Sequence[float], highs: Sequence[float]) -> Row:
  """A row that passes when every repeat's interval contains 0: it reads each interval's distance
  from 0 (0 where it contains it), and `what` gains the intervals' widest ends.

  Example:
    >>> interval_row("leak", "none kept", "MiB/save", [-0.2, 0.1], [0.3, 0.4]).measured
    (0.0, 0.1)
  """
  distances = [max(low, 0.0) - min(high, 0.0) for low, high in zip(lows, highs, strict=True)]
  ends = f" (intervals {_number(min(lows))} to {_number(max(highs))})" if lows else ""
  return Row(family, what + ends, unit, 0.0, tuple(distances), TOLERANCES[f"{family} interval"])


def paired_differences(planted: Mapping[int, float], baseline: Mapping[int, float]) -> list[float]:
  """Each repeat's value with the planting minus the same repeat's without it (repeats in both).

  Example:
    >>> paired_differences({0: 12.0, 1: 13.0, 2: 9.0}, {0: 4.0, 1: 5.0})
    [8.0, 8.0]
  """
  return [planted[r] - baseline[r] for r in sorted(planted) if r in baseline]


def _number(x: float) -> str:
  return f"{x:.4g}" if math.isfinite(x) else "–"


def format_table(rows: Sequence[Row]) -> str:
  """The rows as a markdown table: family, planted, measured (median and range over repeats),
  ratio, tolerance, pass."""
  lines = ["| family | planted | measured (median, range over repeats) | ratio | tolerance | pass |",
           "|---|---|---|---|---|---|"]  # fmt: skip
  for r in rows:
    spread = f" ({_number(min(r.measured))} to {_number(max(r.measured))})" if len(r.measured) > 1 else ""
    ratio = "–" if r.ratio is None else f"{r.ratio:.3f}"
    lines.append(f"| {r.family}: {r.what} | {_number(r.planted)} {r.unit} | {_number(r.median)} {r.unit}{spread}"
                 f" | {ratio} | {r.tolerance.describe(r.unit)} | {'yes' if r.passes else '**no**'} |")  # fmt: skip
  return "\n".join(lines)


# Counts following each law exactly (what `scale` would measure), and where they are read.
PLANTED_LAWS: Mapping[str, Callable[[float], float]] = {
    "constant": lambda n: 7.0,
    "log": lambda n: 3.0 + 5.0 * math.log2(n),
    "linear": lambda n: 11.0 + 4.0 * n,  # the PUTs: 15, 19, 27 at 1, 2, 4 hosts
    "nlogn": lambda n: 2.0 + 0.5 * n * math.log2(n),
    "quadratic": lambda n: 17.0 * n + 2.0 * n * n,  # every host reading every host's metadata
    "inverse": lambda n: 1.0 + 64.0 / n,
}
LAW_HOSTS = (1, 2, 4)
LAW_CHECK_HOSTS = (1, 2, 4, 8)
LAW_TARGET = 64


def law_rows() -> list[Row]:
  """Per law: the prediction at 64 hosts from 1, 2, 4, and the check of 8 from 1, 2, 4, each with
  the law found (a wrong law fails the row whatever its number)."""
  rows = []
  for law, at in PLANTED_LAWS.items():
    fit = select_law(list(LAW_HOSTS), [at(n) for n in LAW_HOSTS], floor=1.0)
    found = predict(fit, LAW_TARGET).value if fit.law == law else math.nan
    rows.append(row("scale law", f"{law}, {LAW_TARGET} hosts from {', '.join(map(str, LAW_HOSTS))} (found {fit.law})",
                    "count", at(LAW_TARGET), [found]))  # fmt: skip
    check = check_largest(list(LAW_CHECK_HOSTS), [at(n) for n in LAW_CHECK_HOSTS], floor=1.0)
    found = check.predicted if check.law == law else math.nan
    rows.append(row("scale law", f"{law}, 8 hosts from {', '.join(map(str, check.from_hosts))} (found {check.law})",
                    "count", at(8), [found]))  # fmt: skip
  return rows
