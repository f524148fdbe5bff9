"""Requests one run made to an object store, by kind (put, get, list, delete), and their price.

Counted by the shaped link when one is in place (every client: TensorStore,
gcsfs, s3fs, boto3), else from TensorStore's kvstore counters (the array data
only: Orbax's metadata files go through gcsfs/s3fs and are not counted then).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import urllib.parse
import urllib.request
from typing import Any, Callable, Mapping, Sequence

from ckptbench.api import tag_value
from ckptbench.api import MetricEntry, MetricValue, register_collector
from ckptbench.metrics._tensorstore import TensorStoreCollector
from ckptbench.storage import LINK_STATS_URL_ENV, StoreURL, checkpoint_cost, store_for

_KINDS = ("put", "get", "list", "delete")
_TENSORSTORE = {"write": "put", "read": "get", "list": "list"}
OP = "checkpoint"


# The primary-only commit steps Orbax times: writing the tree's _METADATA, finalizing (v0
# Checkpointer: the array metadata check, the OCDBT merge, the commit marker) and the OCDBT merge
# (the only timed part of v1's finalize). Each event is emitted when its step ends; windows that
# overlap count a request once.
_COMMIT_EVENTS = ("/jax/orbax/write/background_meta_write_secs", "/jax/orbax/write/finalize_duration_secs",
                  "/jax/orbax/write/background_ocdbt_merge_secs")  # fmt: skip
_commit_lock = threading.Lock()
_open: tuple["LinkRequestsCollector", ...] = ()  # the blocks open now, copy-on-write
_listening = False


def _on_duration(event: str, duration: float, **_: Any) -> None:
  if _open and event in _COMMIT_EVENTS:
    end = time.time()
    for c in _open:
      c._windows.append((end - duration, end))


def _listen_to_commits() -> None:
  """Registers the commit-step listener once, when JAX is loaded (else there is nothing to hear)."""
  global _listening
  monitoring = sys.modules.get("jax.monitoring")
  if monitoring is not None and not _listening:
    monitoring.register_event_duration_secs_listener(_on_duration)
    _listening = True


def _link_stats(url: str, since: int | None = None, windows: Sequence[tuple[float, float]] = ()) -> dict:
  query = {} if since is None else {"since": since}
  if windows:
    query["windows"] = ",".join(f"{t0!r}:{t1!r}" for t0, t1 in windows)
  with urllib.request.urlopen(url + ("?" + urllib.parse.urlencode(query) if query else ""), timeout=5) as answer:
    return json.loads(answer.read())


class LinkRequestsCollector:
  """The shaped link's requests by kind during a measured block (nothing without a link).

  Also the distinct targets among them, the seconds they took, and the requests of Orbax's
  commit steps (the primary's metadata write and finalize) with their seconds.

  Every process's link counts every client of that process, so a block's counts are this
  host's requests while the block was open, other threads' included (as TensorStore's are).
  A request whose target (object or listed prefix, byte range and cache tokens aside) the block
  already read is a repeat: a poll, a revalidation or another byte range of one object, whose
  number depends on timing; the distinct counts do not.
  """

  def start(self) -> None:
    global _open
    self._url = os.environ.get(LINK_STATS_URL_ENV)
    if not self._url:
      return
    self._windows: list[tuple[float, float]] = []
    self._before = _link_stats(self._url)
    _listen_to_commits()
    with _commit_lock:
      _open = _open + (self,)

  def stop(self) -> dict[str, MetricValue]:
    global _open
    if not self._url:
      return {}
    with _commit_lock:
      _open = tuple(c for c in _open if c is not self)
    after = _link_stats(self._url, self._before["seq"], self._windows)
    values = {f"store_{k}_count": after.get(k, 0) - self._before.get(k, 0) for k in _KINDS}
    values.update({f"store_{k}_distinct_count": after["distinct"][k] for k in _KINDS})
    values["store_request_s"] = sum(after["request_s"].values())
    if self._windows:  # only the primary commits
      values.update({f"store_commit_{k}_count": after["in_windows"][k] for k in _KINDS})
      values["store_commit_distinct_count"] = after["in_windows_distinct"]
      values["store_commit_request_s"] = after["in_windows_request_s"]
    return {f"5_inventory/{k}": tag_value(f"5_inventory/{k}", float(v)) for k, v in values.items()}


register_collector("link_requests", LinkRequestsCollector)


class StoreRequests:
  """Counts a run's store requests between `start()` and `stop()`.

  Args:
    url: the run's place in the store.
    link_stats: the shaped link's counter reader (`Link.stats`), or None to
      count TensorStore's kvstore requests (of the store's driver).
  """

  def __init__(self, url: StoreURL, link_stats: Callable[..., Mapping[str, Any]] | None = None):
    self._driver = store_for(url).tensorstore_driver
    self._link_stats = link_stats
    self._before: Any = None
    self._tensorstore = TensorStoreCollector()

  @property
  def source(self) -> str:
    return "link" if self._link_stats else "tensorstore"

  def start(self) -> None:
    if self._link_stats:
      self._before = dict(self._link_stats())
    else:
      self._tensorstore.start()

  def stop(self) -> dict[str, float]:
    """`{"put": n, "get": n, "list": n, "delete": n}` since `start()`; through the link also
    `"<kind>_distinct"` (targets read or written, repeats once) and `"injected_errors"`."""
    if self._link_stats:
      after = self._link_stats(since=self._before["seq"])
      keys = _KINDS + ("injected_errors",)
      counts = {k: float(after.get(k, 0) - self._before.get(k, 0)) for k in keys}
      return counts | {f"{k}_distinct": float(after["distinct"][k]) for k in _KINDS}
    counts = dict.fromkeys(_KINDS, 0.0)
    for tag, metric in self._tensorstore.stop().items():
      name = tag.removeprefix(f"6_tensorstore/kvstore_{self._driver}_")
      if name != tag and name in _TENSORSTORE:
        counts[_TENSORSTORE[name]] += metric.value
    return counts


def store_cost_tags(url: StoreURL, stored_bytes: int, requests: Mapping[str, float]) -> dict[str, MetricEntry]:
  """`checkpoint_5_inventory/store_*` tags: request counts and the estimated price of the run."""
  cost = checkpoint_cost(url.scheme, stored_bytes, requests)  # empty for a store without prices
  values = {f"5_inventory/store_{k}_count": v for k, v in requests.items()}
  if cost:
    values["5_inventory/store_requests_usd"] = cost["requests_usd"]
    values["5_inventory/store_usd_per_month"] = cost["storage_usd_per_month"]
  out = {}
  for key, x in values.items():
    metric: MetricValue = tag_value(key, float(x))
    out[f"{OP}_{key}"] = MetricEntry(metric.value, metric.unit)
  return out
