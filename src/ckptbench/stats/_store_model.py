"""What a checkpoint's requests cost on a real object store at a host count: the store profile
and the bottleneck terms of a save or a restore. Pure math.

A save (or restore) on `n` hosts is estimated by the largest of these terms, which names what
dominates it; all come from counts, none from a time measured on this machine:

- write (read) request rate: every host's requests of that kind, over the bucket's (prefix's)
  request rate (reads: the distinct objects and listings, where the link counted them);
- request latency: the busiest host's requests, one round trip each, `in_flight` at a time;
- host bandwidth: the busiest host's bytes over one host's network (when the profile has it);
- primary commit: the primary's requests beyond another host's (its commit work) during the save,
  distinct ones (`primary_extra_distinct_requests_save`: its polls wait rather than work; all of
  them, or the whole run's, where distinct ones or blocks were not counted), one round trip after
  another (the commit's metadata steps wait on each other).

With the requests of the primary's timed commit steps and their seconds, the commit time is
also modelled as `a + b * requests * latency` (`stats._request_time`) and given at each target
on the profile's latency.

`model_benchmark` puts it together for one benchmark: a growth law per metric, its check and
predictions, the save's and the restore's store time at each target, and the host counts where
a limit is crossed.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping, Sequence

from ckptbench.stats._request_time import RequestTimeFit, check_request_time, fit_request_time
from ckptbench.stats._scaling import (
    Check,
    Fit,
    Prediction,
    check_largest,
    check_refusal,
    first_crossing,
    predict,
    select_law,
    too_few_counts,
)


@dataclasses.dataclass(frozen=True)
class StoreProfile:
  """The limits of a target store.

  Attributes:
    name: what the profile describes.
    latency_s: one request's round trip.
    write_requests_per_s: writes (uploads, updates, deletes) the bucket or prefix takes per second
      before it throttles (None: no limit known).
    read_requests_per_s: reads (object reads, metadata reads, lists) likewise.
    host_bandwidth_bps: bytes per second one host moves to or from the store (None: not limited).
    in_flight: requests each host keeps in flight.
    source: where the figures come from.
  """

  name: str
  latency_s: float
  write_requests_per_s: float | None
  read_requests_per_s: float | None
  host_bandwidth_bps: float | None = None
  in_flight: int = 32
  source: str = ""


# Published request-rate guidance; neither store publishes a per-request latency for writes to
# rely on, so the latencies are stated assumptions (measure yours with the `storage` built-in).
PROFILES: dict[str, StoreProfile] = {
    "gcs": StoreProfile(
        "gcs", latency_s=0.05, write_requests_per_s=1000.0, read_requests_per_s=5000.0,
        source=(
            "request rates: Cloud Storage 'Request rate and access distribution guidelines' "
            "(cloud.google.com/storage/docs/request-rate): a bucket's initial IO capacity is about "
            "1000 object writes and 5000 object reads per second, raised by auto-scaling over "
            "minutes; latency 50 ms is an assumption, not a published figure"
        ),
    ),
    "s3": StoreProfile(
        "s3", latency_s=0.1, write_requests_per_s=3500.0, read_requests_per_s=5500.0,
        source=(
            "request rates: Amazon S3 'Best practices design patterns: optimizing Amazon S3 "
            "performance' (docs.aws.amazon.com/AmazonS3/latest/userguide/optimizing-performance.html): "
            "at least 3,500 PUT/COPY/POST/DELETE and 5,500 GET/HEAD requests per second per "
            "partitioned prefix; latency 100 ms from the same page's 100-200 ms for small objects"
        ),
    ),
}


@dataclasses.dataclass(frozen=True)
class StoreTime:
  """The lower bound of an operation's time on the target store, term by term."""

  seconds: float
  terms: Mapping[str, float]
  dominant: str


def store_time(
    profile: StoreProfile,
    *,
    total_requests: float,
    busiest_host_requests: float,
    busiest_host_bytes: float,
    writes: bool,
    primary_round_trips: float | None = None,
) -> StoreTime:
  """The terms of one save (`writes`) or restore on the target store, and the largest.

  Example:
    >>> t = store_time(PROFILES["gcs"], total_requests=20000, busiest_host_requests=40,
    ...                busiest_host_bytes=1e9, writes=True)
    >>> round(t.seconds, 3), t.dominant
    (20.0, 'write request rate')
  """
  terms: dict[str, float] = {}
  rate = profile.write_requests_per_s if writes else profile.read_requests_per_s
  if rate:
    terms["write request rate" if writes else "read request rate"] = total_requests / rate
  terms["request latency"] = busiest_host_requests * profile.latency_s / max(1, profile.in_flight)
  if profile.host_bandwidth_bps:
    terms["host bandwidth"] = busiest_host_bytes / profile.host_bandwidth_bps
  if primary_round_trips is not None:
    terms["primary commit"] = max(0.0, primary_round_trips) * profile.latency_s
  dominant = max(terms, key=lambda k: terms[k])
  return StoreTime(terms[dominant], terms, dominant)


@dataclasses.dataclass(frozen=True)
class MetricModel:
  """One metric's growth law, its check on the largest measured host count, its predictions."""

  kind: str
  fit: Fit
  check: Check | None
  predictions: tuple[Prediction, ...]
  no_check: str | None = None  # why `check` is None


@dataclasses.dataclass(frozen=True)
class Limit:
  """Where a limit is first crossed: the host count (None: not up to `CROSSING_STOP`), and how."""

  name: str
  hosts: int | None
  detail: str


@dataclasses.dataclass(frozen=True)
class CommitModel:
  """The primary's commit time as `a + b * requests * latency`: its fit, its check on the largest
  measured host count, its seconds at each target on the profile's latency, and the measured host
  counts the time was fitted to (the request count's law names its own)."""

  fit: RequestTimeFit
  check: Check | None
  seconds: Mapping[int, float]
  from_hosts: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True)
class BenchmarkModel:
  """The scale model of one benchmark; `no_law` names each metric measured at too few host
  counts to choose a law, and why (it has no fit and no prediction); `left_out` each store-time
  term left out of `save` for want of its metric's law, and why; `commit_refused` why the commit
  time was measured but gives no model."""

  metrics: Mapping[str, MetricModel]
  save: Mapping[int, StoreTime]
  restore: Mapping[int, StoreTime]
  limits: tuple[Limit, ...]
  commit: CommitModel | None = None
  no_law: Mapping[str, str] = dataclasses.field(default_factory=dict)
  left_out: Mapping[str, str] = dataclasses.field(default_factory=dict)
  commit_refused: str | None = None


CROSSING_STOP = 1 << 20
_SAVE = ("requests_put_total", "requests_delete_total", "requests_put_max_host", "array_bytes_written_max_host")
_RESTORE = ("requests_get_total", "requests_list_total", "requests_get_max_host", "requests_list_max_host")


def _reads(fits: Mapping[str, Fit], name: str) -> Fit:
  """A read count's distinct form where the link counted one: a lower bound (repeated reads are polls
  and revalidations whose number depends on timing), as every term is."""
  return fits.get(name.replace("_get_", "_get_distinct_").replace("_list_", "_list_distinct_"), fits[name])


# The primary's commit work, best first: its distinct extra requests in the save, all of them, the run's.
_PRIMARY_WORK = ("primary_extra_distinct_requests_save", "primary_extra_requests_save", "primary_extra_requests")
# The commit time, its distinct requests (exact; a repeat's round trip counts in the latency) and their seconds.
_COMMIT = ("primary_commit_s", "primary_commit_distinct_requests", "primary_commit_request_s")


def _commit_points(series: Mapping[str, Mapping[int, float]], repeats: Mapping[str, Mapping[int, Sequence[float]]],
                   fit_from: int) -> tuple[list[int], list[float], list[float], list[float]]:  # fmt: skip
  """(hosts, times, requests, latencies): one point per repeat where each repeat's values are
  known (a time and the requests of the same repeat belong together), else one per host count."""
  points = []
  for h in sorted(series[_COMMIT[0]]):
    per_repeat = [repeats.get(k, {}).get(h, ()) for k in _COMMIT]
    if not all(per_repeat) or len({len(r) for r in per_repeat}) != 1:
      per_repeat = [(series[k][h],) for k in _COMMIT]
    points += [(h, t, r, s / r) for t, r, s in zip(*per_repeat) if h >= fit_from and r]
  hosts, times, requests, latencies = (list(column) for column in zip(*points)) if points else ([], [], [], [])
  return hosts, times, requests, latencies


def _commit_model(series: Mapping[str, Mapping[int, float]], repeats: Mapping[str, Mapping[int, Sequence[float]]],
                  fits: Mapping[str, Fit], targets: Sequence[int], profile: StoreProfile,
                  fit_from: int) -> CommitModel | str | None:  # fmt: skip
  """The commit time from its requests and their latency (None: not measured, or no requests; a
  string: why the measured times give no model)."""
  if not all(k in series for k in _COMMIT) or _COMMIT[1] not in fits:
    return None
  hosts, *args = _commit_points(series, repeats, fit_from)
  if len(set(hosts)) < 2:
    return None
  fit = fit_request_time(*args)
  # A slope at or below 0 says the time did not grow with the request work measured here (noise
  # larger than the work): extrapolated, it would predict a shorter or negative commit at scale.
  if fit.b <= 0:
    return (f"the commit time did not grow with its requests x latency here (b = {fit.b:.3g}):"
            " the time measured is noise, not the requests' work")  # fmt: skip
  count = fits[_COMMIT[1]]
  seconds = {t: fit.at(max(0.0, count.at(t)), profile.latency_s) for t in targets}
  if min(seconds.values(), default=1.0) <= 0:
    return f"a = {fit.a:.3g} s makes the commit time at or below 0 at a target"
  return CommitModel(fit, check_request_time(hosts, *args), seconds, tuple(sorted(set(hosts))))


def _floor(kind: str) -> float:
  return 1.0 if kind in ("count", "memory") else 1e-3  # a count off by 0.4 is 40% off a count of 0 or 1


def _store_times(fits: Mapping[str, Fit], profile: StoreProfile, n: int) -> tuple[StoreTime, StoreTime] | None:
  """The save's and the restore's store time at `n` hosts from the fitted counts (None: counts missing)."""
  if not all(k in fits for k in _SAVE + _RESTORE):
    return None
  f = {k: max(0.0, fit.at(n)) for k, fit in fits.items()}
  f.update({k: max(0.0, _reads(fits, k).at(n)) for k in _RESTORE})
  save = store_time(
      profile, total_requests=f["requests_put_total"] + f["requests_delete_total"],
      busiest_host_requests=f["requests_put_max_host"], busiest_host_bytes=f["array_bytes_written_max_host"],
      writes=True, primary_round_trips=next((f[k] for k in _PRIMARY_WORK if k in f), None),
  )  # fmt: skip
  restore = store_time(
      profile, total_requests=f["requests_get_total"] + f["requests_list_total"],
      busiest_host_requests=f["requests_get_max_host"] + f["requests_list_max_host"],
      busiest_host_bytes=f["array_bytes_written_max_host"], writes=False,
  )  # fmt: skip
  return save, restore


def _limits(fits: Mapping[str, Fit], profile: StoreProfile, save_interval_s: float, memory_mib: float) -> list[Limit]:
  limits = []

  def times(n: int) -> tuple[StoreTime, StoreTime]:
    return _store_times(fits, profile, n)  # type: ignore[return-value]

  if _store_times(fits, profile, 1) is not None:
    for i, (name, term) in enumerate((("write request rate", "save"), ("read request rate", "restore"))):
      if name in times(1)[i].terms:
        n = first_crossing(lambda n, i=i, name=name: times(n)[i].terms[name] / max(
            times(n)[i].terms["request latency"], 1e-12), 1.0, stop=CROSSING_STOP)  # fmt: skip
        limits.append(Limit(name, n, f"the {term}'s requests arrive faster than the store takes them"
                                     f" ({name} term above the busiest host's request latency)"))  # fmt: skip
    n = first_crossing(lambda n: times(n)[0].seconds, save_interval_s, stop=CROSSING_STOP)
    limits.append(Limit("save over the interval", n, f"the save's store time reaches the {save_interval_s:g} s interval"))
  if _store_times(fits, profile, 1) is not None and "primary commit" in times(1)[0].terms:
    n = first_crossing(lambda n: times(n)[0].terms["primary commit"], save_interval_s, stop=CROSSING_STOP)
    limits.append(Limit("primary commit over the interval", n, "the primary's extra requests, one round trip"
                        f" each, reach the {save_interval_s:g} s interval"))  # fmt: skip
  if "primary_commit_s" in fits:
    n = first_crossing(lambda n: fits["primary_commit_s"].at(n), save_interval_s, stop=CROSSING_STOP)
    limits.append(Limit("primary commit time measured here over the interval", n,
                        f"the primary's commit time on this machine (inflated) reaches the {save_interval_s:g} s"
                        " interval"))  # fmt: skip
  if "primary_rss_peak_mib" in fits:
    n = first_crossing(lambda n: fits["primary_rss_peak_mib"].at(n), memory_mib, stop=CROSSING_STOP)
    limits.append(Limit("primary memory", n, f"the primary's peak memory reaches {memory_mib:g} MiB"))
  return limits


def model_benchmark(
    series: Mapping[str, Mapping[int, float]],
    kinds: Mapping[str, str],
    targets: Sequence[int],
    profile: StoreProfile,
    *,
    save_interval_s: float,
    host_memory_mib: float,
    fit_from: int = 1,
    repeats: Mapping[str, Mapping[int, Sequence[float]]] | None = None,
    first_hosts: Mapping[str, int] | None = None,
) -> BenchmarkModel:
  """Fits every metric of one benchmark, predicts it at `targets`, and finds the limits.

  Args:
    series: `{metric: {host count: value}}` (two host counts at least).
    kinds: each metric's kind: "count", "time" or "memory".
    targets: host counts to predict.
    profile: the target store.
    save_interval_s: the interval the save and the primary's commit must fit in.
    host_memory_mib: the memory of one target host.
    fit_from: the smallest host count the laws are fitted to.
    repeats: `{metric: {host count: each repeat's value}}`, in one repeat order for every
      metric: the commit model fits each repeat's time to that repeat's requests.
    first_hosts: `{metric: the fewest hosts it exists at}` (2 for a cross-host step: one
      process has no barriers and no other host to do more than); such a metric is fitted from
      there on. A metric left with fewer than `LAW_POINTS` host counts gets no law (`no_law`).
  """
  metrics, fits, no_law = {}, {}, {}
  for name, points in series.items():
    start = max(fit_from, (first_hosts or {}).get(name, 1))
    hosts = [h for h in sorted(points) if h >= start]
    refusal = too_few_counts(hosts, f"a law from {start} hosts on")
    if refusal:
      no_law[name] = refusal
      continue
    values = [points[h] for h in hosts]
    fit = select_law(hosts, values, floor=_floor(kinds[name]))
    fits[name] = fit
    metrics[name] = MetricModel(kinds[name], fit, check_largest(hosts, values, floor=_floor(kinds[name])),
                                tuple(predict(fit, t) for t in targets), check_refusal(hosts))  # fmt: skip
  save, restore = {}, {}
  for t in targets:
    pair = _store_times(fits, profile, t)
    if pair is not None:
      save[t], restore[t] = pair
  limits = _limits(fits, profile, save_interval_s, host_memory_mib)
  commit = _commit_model(series, repeats or {}, fits, targets, profile, fit_from)
  work = [k for k in _PRIMARY_WORK if k in no_law]
  left_out = {"primary commit": f"{work[0]}: {no_law[work[0]]}"} if work and not any(k in fits for k in _PRIMARY_WORK) else {}
  return BenchmarkModel(metrics, save, restore, tuple(limits), commit if isinstance(commit, CommitModel) else None,
                        no_law, left_out, commit if isinstance(commit, str) else None)  # fmt: skip
