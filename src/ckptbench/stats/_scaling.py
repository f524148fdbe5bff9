"""How a quantity grows with the host count: growth laws, their selection by held-out error,
and the check that predicts the largest measured host count from the smaller ones. Pure math.

Every law is `value = a + b * f(n)` with one basis `f`: constant (no `b`), log (log2 n), linear
(n), n log n (n log2 n), and inverse (1/n: what a strong-scaling per-host quantity does); and
quadratic, `a * n + b * n^2`: a total over `n` hosts of a per-host figure that grows linearly
(each host reads something of every other host's), which n log n only mimics in a small range. The law
is chosen by leave-one-out error: each point is predicted from a fit to the others, and the law
with the smallest mean relative error wins; laws within 10% of the best error lose to a simpler
one (fewer parameters, then the order of `LAWS`), so an exact count picks the plainest law that
reproduces it.

A law is chosen only from enough host counts to tell the laws apart: every law but the constant
has two parameters, so holding one point out and predicting it from a fit to the others scores
them only from `LAW_POINTS` (3) distinct counts on; from 2, leave-one-out could score the constant
law alone and would choose it whatever the points say. With fewer, `select_law` refuses
(`TooFewHostCounts`), and the check of the largest count needs that many below it. Every fit,
prediction and check keeps the host counts it came from.

The interval of a prediction is the spread of the leave-one-out refits' predictions, widened by
the largest held-out relative error: it says how well the law fits the measured range, not that
the law still holds far beyond it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Sequence

import numpy as np

LAWS = ("constant", "log", "linear", "nlogn", "quadratic", "inverse")
_BASES: dict[str, Callable[[float], float]] = {
    "constant": lambda n: 0.0,
    "log": lambda n: math.log2(n),
    "linear": lambda n: float(n),
    "nlogn": lambda n: n * math.log2(n),
    "quadratic": lambda n: float(n) * n,
    "inverse": lambda n: 1.0 / n,
}
# What `a` multiplies: 1, but n for the quadratic law (a total over hosts has no constant part).
_FIRST: dict[str, Callable[[float], float]] = {"quadratic": lambda n: float(n)}
_FORMULAS = {
    "constant": "a",
    "log": "a + b*log2(n)",
    "linear": "a + b*n",
    "nlogn": "a + b*n*log2(n)",
    "quadratic": "a*n + b*n^2",
    "inverse": "a + b/n",
}
# A law whose held-out error is within this factor of the best loses to a simpler one.
SIMPLER_WITHIN = 1.10
# The fewest distinct host counts that tell the laws apart (two parameters, and one held out).
LAW_POINTS = 3
# Below this, two errors count as equal (exact counts fit exactly, up to float rounding).
_EXACT = 1e-9


class TooFewHostCounts(ValueError):
  """Fewer distinct host counts than it takes to tell the growth laws apart."""


def too_few_counts(hosts: Sequence[int], what: str = "telling growth laws apart") -> str | None:
  """Why `hosts` cannot choose a law (None when they can): the counts it needs and those it has.

  Example:
    >>> too_few_counts([2, 4])
    'telling growth laws apart needs 3 distinct host counts, got 2 (2, 4)'
  """
  distinct = sorted(set(hosts))
  if len(distinct) >= LAW_POINTS:
    return None
  return f"{what} needs {LAW_POINTS} distinct host counts, got {len(distinct)} ({', '.join(map(str, distinct))})"


@dataclasses.dataclass(frozen=True)
class Fit:
  """A growth law fitted to (host count, value) points.

  Attributes:
    law: one of `LAWS`.
    a: the constant term.
    b: the coefficient of the law's basis (0 for "constant").
    held_out_error: mean relative error of predicting each point from the others
      (None when there were too few points to hold one out).
    max_held_out_error: the largest of those errors (None likewise).
    hosts: the host counts fitted (every prediction of the fit comes from them).
    values: the values fitted.
  """

  law: str
  a: float
  b: float
  held_out_error: float | None
  max_held_out_error: float | None
  hosts: tuple[int, ...]
  values: tuple[float, ...]

  @property
  def formula(self) -> str:
    return _FORMULAS[self.law]

  def at(self, n: float) -> float:
    """The law's value at `n` hosts."""
    return _at(self.law, self.a, self.b, n)

  def terms_at(self, n: float) -> dict[str, float]:
    """The law's two terms at `n`: `{"constant": a, "<law>": b * f(n)}` (one for "constant";
    `{"linear": a * n, "quadratic": b * n^2}` for "quadratic")."""
    if self.law == "constant":
      return {"constant": self.a}
    first = "linear" if self.law in _FIRST else "constant"
    return {first: self.a * _FIRST.get(self.law, _one)(n), self.law: self.b * _BASES[self.law](n)}


@dataclasses.dataclass(frozen=True)
class Prediction:
  """A fitted law's value at a host count, its interval, its larger term, and the measured host
  counts it came from."""

  hosts: int
  value: float
  low: float
  high: float
  dominant: str
  from_hosts: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class Check:
  """The largest measured host count predicted from the smaller ones (`from_hosts`)."""

  hosts: int
  predicted: float
  measured: float
  relative_error: float
  law: str
  from_hosts: tuple[int, ...]


def _one(n: float) -> float:
  return 1.0


def _at(law: str, a: float, b: float, n: float) -> float:
  return a * _FIRST.get(law, _one)(n) + b * _BASES[law](n)


def _parameters(law: str) -> int:
  return 1 if law == "constant" else 2


def fit_law(law: str, hosts: Sequence[float], values: Sequence[float]) -> tuple[float, float]:
  """Least-squares `(a, b)` of one law.

  Raises:
    ValueError: an unknown law, or fewer distinct host counts than the law has parameters.

  Example:
    >>> fit_law("linear", [1, 2, 4], [5.0, 7.0, 11.0])
    (3.0, 2.0)
  """
  if law not in _BASES:
    raise ValueError(f"Invalid value for law={law!r}, possible values are {LAWS}")
  if len(set(hosts)) < _parameters(law):
    raise ValueError(f"the {law} law needs {_parameters(law)} distinct host counts, got {sorted(set(hosts))}")
  y = np.asarray(values, dtype=float)
  if law == "constant":
    return float(y.mean()), 0.0
  design = np.array([[_FIRST.get(law, _one)(n), _BASES[law](n)] for n in hosts])
  (a, b), *_ = np.linalg.lstsq(design, y, rcond=None)
  return float(round(a, 12)), float(round(b, 12))


def relative_error(predicted: float, measured: float, floor: float = 1e-12) -> float:
  """|predicted - measured| / max(|measured|, floor); 0 when both are 0."""
  gap = abs(predicted - measured)
  return 0.0 if gap <= _EXACT * max(1.0, abs(measured)) else gap / max(abs(measured), floor)


def _held_out(law: str, hosts: Sequence[int], values: Sequence[float], floor: float) -> list[float] | None:
  """Each point's relative error when predicted from a fit to the others; None when too few points."""
  errors = []
  for i in range(len(hosts)):
    rest_h = [h for j, h in enumerate(hosts) if j != i]
    rest_v = [v for j, v in enumerate(values) if j != i]
    if len(set(rest_h)) < _parameters(law):
      return None
    a, b = fit_law(law, rest_h, rest_v)
    errors.append(relative_error(_at(law, a, b, hosts[i]), values[i], floor))
  return errors


def select_law(hosts: Sequence[int], values: Sequence[float], *, floor: float = 1e-12,
               laws: Sequence[str] = LAWS) -> Fit:  # fmt: skip
  """The law with the smallest leave-one-out error (a simpler one when within 10% of it).

  Args:
    hosts: the measured host counts (at least 1 each, `LAW_POINTS` distinct ones at least).
    values: the value at each.
    floor: the smallest denominator of a relative error (1 for counts, so that
      0 vs 0.4 is an error of 0.4, not infinity).
    laws: the laws to consider.

  Raises:
    TooFewHostCounts: fewer than `LAW_POINTS` distinct host counts.
    ValueError: hosts and values of different lengths, or a host count below 1.

  Example:
    >>> select_law([1, 2, 4, 8], [3.0, 5.0, 9.0, 17.0]).law
    'linear'
  """
  if len(hosts) != len(values):
    raise ValueError(f"{len(hosts)} host counts but {len(values)} values")
  if any(h < 1 for h in hosts):
    raise ValueError(f"host counts must be at least 1, got {list(hosts)}")
  refusal = too_few_counts(hosts)
  if refusal:
    raise TooFewHostCounts(refusal)
  scored = []
  for order, law in enumerate(laws):
    errors = _held_out(law, hosts, values, floor)
    if errors is not None:
      scored.append((sum(errors) / len(errors), max(errors), _parameters(law), order, law))
  best = min(s[0] for s in scored)
  close = [s for s in scored if s[0] <= best * SIMPLER_WITHIN + _EXACT]
  mean_error, max_error, _, _, law = min(close, key=lambda s: (s[2], s[3]))
  a, b = fit_law(law, hosts, values)
  return Fit(law, a, b, mean_error, max_error, tuple(hosts), tuple(float(v) for v in values))


def predict(fit: Fit, n: int) -> Prediction:
  """The fit's value at `n` hosts, with the interval of its leave-one-out refits widened by
  its largest held-out error, and which of its terms is larger there.

  Example:
    >>> p = predict(select_law([1, 2, 4, 8], [3.0, 5.0, 9.0, 17.0]), 1024)
    >>> p.value, p.low, p.high, p.dominant
    (2049.0, 2049.0, 2049.0, 'linear')
  """
  value = fit.at(n)
  refits = [value]
  for i in range(len(fit.hosts)):
    rest_h = [h for j, h in enumerate(fit.hosts) if j != i]
    rest_v = [v for j, v in enumerate(fit.values) if j != i]
    if len(set(rest_h)) >= _parameters(fit.law):
      a, b = fit_law(fit.law, rest_h, rest_v)
      refits.append(_at(fit.law, a, b, n))
  widen = fit.max_held_out_error or 0.0
  low, high = min(refits), max(refits)
  low, high = low - abs(low) * widen, high + abs(high) * widen
  terms = fit.terms_at(n)
  dominant = max(terms, key=lambda k: abs(terms[k]))
  return Prediction(n, value, low, high, dominant, tuple(sorted(set(fit.hosts))))


def check_largest(hosts: Sequence[int], values: Sequence[float], *, floor: float = 1e-12) -> Check | None:
  """Predicts the largest host count's value from the smaller ones; None with fewer than
  `LAW_POINTS` smaller counts (`check_refusal` says why).

  Example:
    >>> c = check_largest([1, 2, 4, 8, 16], [3.0, 5.0, 9.0, 17.0, 33.0])
    >>> c.hosts, c.predicted, c.relative_error, c.law, c.from_hosts
    (16, 33.0, 0.0, 'linear', (1, 2, 4, 8))
  """
  if check_refusal(hosts):
    return None
  largest = max(hosts)
  smaller = [(h, v) for h, v in zip(hosts, values) if h != largest]
  fit = select_law([h for h, _ in smaller], [v for _, v in smaller], floor=floor)
  measured = float(np.mean([v for h, v in zip(hosts, values) if h == largest]))
  predicted = fit.at(largest)
  return Check(largest, predicted, measured, relative_error(predicted, measured, floor), fit.law,
               tuple(sorted(set(fit.hosts))))  # fmt: skip


def check_refusal(hosts: Sequence[int]) -> str | None:
  """Why the largest of `hosts` cannot be predicted from the smaller ones (None when it can).

  Example:
    >>> check_refusal([2, 4, 8])
    'predicting 8 hosts from the smaller counts needs 3 distinct host counts, got 2 (2, 4)'
  """
  largest = max(hosts)
  return too_few_counts([h for h in hosts if h != largest], f"predicting {largest} hosts from the smaller counts")


def first_crossing(value_at: Callable[[int], float], limit: float, *, start: int = 1,
                   stop: int = 1 << 20) -> int | None:  # fmt: skip
  """The smallest host count in [start, stop] where `value_at(n) >= limit`, for a
  non-decreasing `value_at`; None when it stays below the limit up to `stop`.

  Example:
    >>> first_crossing(lambda n: 2.0 * n, 1000.0)
    500
  """
  if value_at(start) >= limit:
    return start
  low, high = start, start
  while value_at(high) < limit:
    if high >= stop:
      return None
    low, high = high, min(stop, high * 2)
  while high - low > 1:  # value_at(low) < limit <= value_at(high)
    middle = (low + high) // 2
    low, high = (middle, high) if value_at(middle) < limit else (low, middle)
  return high
