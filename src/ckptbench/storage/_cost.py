"""What a checkpoint costs on a store: requests per save, bytes kept per month.

The prices are each store's (`ObjectStore.prices`): list prices for the
cheapest standard class in a US region (checked November 2026; see
docs/storage.md). Prices move and differ by region, class and contract: point
CKPTBENCH_PRICE_TABLE at a JSON file to override any of them, e.g.
{"gs": {"storage_gb_month": 0.026}}.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Mapping

from ckptbench.errors import CkptbenchError
from ckptbench.storage._registry import store_for, stores
from ckptbench.storage._store import Prices

PRICE_TABLE_ENV = "CKPTBENCH_PRICE_TABLE"


def price_table() -> dict[str, Prices]:
  """`{scheme: prices}` of the stores that have prices, with $CKPTBENCH_PRICE_TABLE's overrides."""
  table = {s.scheme: s.prices for s in stores() if s.prices is not None}
  path = os.environ.get(PRICE_TABLE_ENV)
  if not path:
    return table
  try:
    with open(path, encoding="utf-8") as f:
      overrides = json.load(f)
    return {scheme: dataclasses.replace(prices, **overrides.get(scheme, {})) for scheme, prices in table.items()}
  except (OSError, ValueError, TypeError, AttributeError) as e:  # ValueError: not UTF-8, not JSON
    raise CkptbenchError(
        f"{PRICE_TABLE_ENV}={path}: cannot read the price table ({e}); expected JSON like"
        ' {"gs": {"storage_gb_month": 0.026, "put_per_1000": 0.005}}'
    ) from None


def checkpoint_cost(scheme: str, stored_bytes: int, requests: Mapping[str, float]) -> dict[str, float]:
  """Estimated USD for one checkpoint: its requests, and keeping its bytes a month.

  Args:
    scheme: the store's scheme ("gs", "s3", ...).
    stored_bytes: bytes the checkpoint occupies in the store.
    requests: counts by kind ("put", "get", "list").

  Returns:
    {"requests_usd", "storage_usd_per_month"}; empty for a store without prices.

  Example:
    >>> checkpoint_cost("gs", 10**9, {"put": 1000})["requests_usd"]
    0.005
  """
  p = price_table().get(store_for(scheme).scheme)
  if p is None:
    return {}
  requests_usd = (
      requests.get("put", 0) * p.put_per_1000
      + requests.get("get", 0) * p.get_per_1000
      + requests.get("list", 0) * p.list_per_1000
  ) / 1000
  return {"requests_usd": requests_usd, "storage_usd_per_month": stored_bytes / 1e9 * p.storage_gb_month}
