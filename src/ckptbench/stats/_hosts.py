"""Statistics across hosts: is one host slower than the others?

Pure functions over numbers (no I/O, no JAX). Each host's value for a metric
is the mean of that host's samples (its repeats); the statistics are taken over
those per-host values, so a host with more samples does not weigh more.
"""

from __future__ import annotations

import math
import statistics
from typing import Mapping, Sequence

import numpy as np

from ckptbench.api import HostStatistics


def host_statistics(
    samples_by_host: Mapping[int, Sequence[float]],
    *,
    higher_is_better: bool = False,
) -> HostStatistics | None:
  """Summarises one metric across hosts and names the slowest host.

  Args:
    samples_by_host: host index -> that host's samples of the metric (one per
      repeat). Hosts without samples, and NaN or infinite samples, are left out.
    higher_is_better: True for rates (the slowest host has the smallest
      value); False for times and sizes (the slowest has the largest).

  Returns:
    None when no host has a sample; otherwise the statistics over the hosts'
    means (`std` is the sample standard deviation, 0 for one host, as in
    `describe`), with ties for slowest going to the lowest host index.

  Example:
    >>> b = host_statistics({0: [1.0, 3.0], 1: [4.0]})
    >>> b.mean, b.slowest_host, b.per_host
    (3.0, 1, {0: 2.0, 1: 4.0})
  """
  per_host = {}
  for host in sorted(samples_by_host):
    finite = [float(v) for v in samples_by_host[host] if v is not None and math.isfinite(float(v))]
    if finite:
      per_host[host] = statistics.fmean(finite)
  if not per_host:
    return None
  hosts = list(per_host)
  values = [per_host[h] for h in hosts]
  worst = int(np.argmin(values) if higher_is_better else np.argmax(values))  # first of ties
  return HostStatistics(
      n=len(values),
      min=min(values),
      mean=statistics.fmean(values),
      max=max(values),
      p50=statistics.median(values),
      p99=float(np.percentile(values, 99)),
      std=statistics.stdev(values) if len(values) > 1 else 0.0,
      slowest_host=hosts[worst],
      slowest_value=values[worst],
      per_host=dict(per_host),
  )
