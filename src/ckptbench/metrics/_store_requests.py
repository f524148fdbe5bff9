"""Requests one run made to an object store, by billing kind (put, get, list), and their price.

Counted by the shaped link when one is in place (every client: TensorStore,
gcsfs, s3fs, boto3), else from TensorStore's kvstore counters (the array data
only: Orbax's metadata files go through gcsfs/s3fs and are not counted then).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ckptbench.api import tag_value
from ckptbench.api import MetricEntry, MetricValue
from ckptbench.metrics._tensorstore import TensorStoreCollector
from ckptbench.storage import StoreURL, checkpoint_cost, store_for

_KINDS = ("put", "get", "list")
_TENSORSTORE = {"write": "put", "read": "get", "list": "list"}
OP = "checkpoint"


class StoreRequests:
  """Counts a run's store requests between `start()` and `stop()`.

  Args:
    url: the run's place in the store.
    link_stats: the shaped link's counter reader (`Link.stats`), or None to
      count TensorStore's kvstore requests (of the store's driver).
  """

  def __init__(self, url: StoreURL, link_stats: Callable[[], Mapping[str, int]] | None = None):
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
    """`{"put": n, "get": n, "list": n, "injected_errors": n?}` since `start()`."""
    if self._link_stats:
      after = self._link_stats()
      keys = _KINDS + ("injected_errors",)
      return {k: float(after.get(k, 0) - self._before.get(k, 0)) for k in keys}
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
