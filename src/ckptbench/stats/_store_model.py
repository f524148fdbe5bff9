"""What a checkpoint's requests cost on a real object store at a host count: the store profile
and the bottleneck terms of a save or a restore. Pure math.

A save (or restore) on `n` hosts takes at least as long as each of these terms, so the largest
one is its lower bound and names what dominates:

- write (read) request rate: every host's requests of that kind, over the bucket's (prefix's)
  request rate;
- request latency: the busiest host's requests, one round trip each, `in_flight` at a time;
- host bandwidth: the busiest host's bytes over one host's network (when the profile has it);
- primary commit: the primary's own commit work (a fitted time, measured on this machine).
"""

from __future__ import annotations

import dataclasses
from typing import Mapping


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
    primary_commit_s: float | None = None,
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
  if primary_commit_s is not None:
    terms["primary commit"] = max(0.0, primary_commit_s)
  dominant = max(terms, key=lambda k: terms[k])
  return StoreTime(terms[dominant], terms, dominant)
