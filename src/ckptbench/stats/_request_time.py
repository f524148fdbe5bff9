"""A time explained by the requests made during it: `time = a + b * requests * latency`. Pure math.

The primary's commit is a chain of store requests (reading every host's metadata, writing its
own) plus some work of its own. Its time on the machine that measured it grows with that
machine's request latency as much as with the host count, so a growth law in `n` fitted to the
time mixes the two. This model keeps them apart: the request count is a count (fitted by its own
growth law, exact), the latency is measured (here, per host count; on the target, the store
profile's), and `a` (seconds of other work) and `b` (seconds per request round trip: 1 when the
requests run one after another, 1/k with k in flight) are fitted by least squares.

The check predicts the largest measured host count from the smaller ones: `a` and `b` and the
count's law from the smaller counts alone, the latency measured at the largest (what the store
profile gives at a target).
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from ckptbench.stats._scaling import Check, check_refusal, relative_error, select_law


@dataclasses.dataclass(frozen=True)
class RequestTimeFit:
  """`time = a + b * requests * latency`, fitted to measured points.

  Attributes:
    a: seconds of work besides the requests.
    b: seconds of the time per second of request round trips (1: one after another).
    held_out_error: mean relative error of predicting each point's time from the others'
      (with that point's own requests and latency); None with fewer than 3 points.
    max_held_out_error: the largest of those errors (None likewise).
  """

  a: float
  b: float
  held_out_error: float | None
  max_held_out_error: float | None

  def at(self, requests: float, latency_s: float) -> float:
    """The time of `requests` round trips of `latency_s` each."""
    return self.a + self.b * requests * latency_s


def _least_squares(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
  design = np.column_stack([np.ones(len(x)), np.asarray(x, dtype=float)])
  (a, b), *_ = np.linalg.lstsq(design, np.asarray(y, dtype=float), rcond=None)
  return float(a), float(b)


def fit_request_time(times: Sequence[float], requests: Sequence[float], latencies: Sequence[float], *,
                     floor: float = 1e-3) -> RequestTimeFit:  # fmt: skip
  """Fits `a` and `b` to measured times, request counts and mean latencies (one each per host count).

  Raises:
    ValueError: fewer than 2 points, or lengths that differ.

  Example:
    >>> f = fit_request_time([0.2, 0.3, 0.5], [10, 20, 40], [0.01, 0.01, 0.01])
    >>> round(f.a, 6), round(f.b, 6), f.held_out_error
    (0.1, 1.0, 0.0)
  """
  if not len(times) == len(requests) == len(latencies):
    raise ValueError(f"{len(times)} times, {len(requests)} request counts and {len(latencies)} latencies")
  if len(times) < 2:
    raise ValueError(f"a request-time fit needs at least 2 points, got {len(times)}")
  x = [r * lat for r, lat in zip(requests, latencies)]
  a, b = _least_squares(x, times)
  errors = []
  if len(times) >= 3:
    for i in range(len(times)):
      ra, rb = _least_squares(x[:i] + x[i + 1:], list(times[:i]) + list(times[i + 1:]))
      errors.append(relative_error(ra + rb * x[i], times[i], floor))
  return RequestTimeFit(a, b, sum(errors) / len(errors) if errors else None, max(errors, default=None))


def check_request_time(hosts: Sequence[int], times: Sequence[float], requests: Sequence[float],
                       latencies: Sequence[float], *, floor: float = 1e-3) -> Check | None:  # fmt: skip
  """Predicts the largest host count's time from the smaller ones: `a`, `b` and the request
  count's growth law fitted to the smaller counts, the latency measured at the largest (the
  median of its points, as the time it is compared with). A host count may have several points
  (one per repeat). None with fewer than `LAW_POINTS` host counts below the largest (the
  request count's law is chosen from them).

  Example:
    >>> c = check_request_time([2, 4, 8, 16], [0.3, 0.5, 0.9, 3.3], [20, 40, 80, 160], [0.01, 0.01, 0.01, 0.02])
    >>> round(c.predicted, 6), c.relative_error, c.law
    (3.3, 0.0, 'a + b*requests*latency (requests: linear)')
  """
  if check_refusal(hosts):
    return None
  largest = max(hosts)
  smaller = [i for i, h in enumerate(hosts) if h != largest]
  at = [i for i, h in enumerate(hosts) if h == largest]
  fit = fit_request_time([times[i] for i in smaller], [requests[i] for i in smaller],
                         [latencies[i] for i in smaller], floor=floor)  # fmt: skip
  count = select_law([hosts[i] for i in smaller], [requests[i] for i in smaller], floor=1.0)
  latency = float(np.median([latencies[i] for i in at]))
  measured = float(np.median([times[i] for i in at]))
  predicted = fit.at(count.at(largest), latency)
  return Check(largest, predicted, measured, relative_error(predicted, measured, floor),
               f"a + b*requests*latency (requests: {count.law})", tuple(sorted(set(count.hosts))))  # fmt: skip
