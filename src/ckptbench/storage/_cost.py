"""What a checkpoint costs on a store: requests per save, bytes kept per month.

The price table is list prices for the cheapest standard class in a US region
(checked November 2026; see docs/storage.md). Prices move and differ by region,
class and contract: point CKPTBENCH_PRICE_TABLE at a JSON file to override
any of them, e.g. {"gs": {"storage_gb_month": 0.026}}.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Mapping

from ckptbench.errors import CkptbenchError

PRICE_TABLE_ENV = "CKPTBENCH_PRICE_TABLE"


@dataclasses.dataclass(frozen=True)
class Prices:
  """USD prices of one store (GB = 10^9 bytes, as the clouds bill)."""

  storage_gb_month: float
  put_per_1000: float  # writes; GCS class A, S3 PUT/COPY/POST
  get_per_1000: float  # reads and metadata reads; GCS class B, S3 GET
  list_per_1000: float  # listings; billed as writes on both
  source: str


PRICES: dict[str, Prices] = {
    "gs": Prices(0.020, 0.005, 0.0004, 0.005, "GCS Standard, us-central1: cloud.google.com/storage/pricing"),
    "s3": Prices(0.023, 0.005, 0.0004, 0.005, "S3 Standard, us-east-1: aws.amazon.com/s3/pricing"),
}


def price_table() -> dict[str, Prices]:
  """The built-in prices with the overrides from $CKPTBENCH_PRICE_TABLE applied."""
  path = os.environ.get(PRICE_TABLE_ENV)
  if not path:
    return dict(PRICES)
  try:
    with open(path, encoding="utf-8") as f:
      overrides = json.load(f)
    return {
        scheme: dataclasses.replace(prices, **overrides.get(scheme, {}))
        for scheme, prices in PRICES.items()
    }
  except (OSError, json.JSONDecodeError, TypeError, AttributeError) as e:
    raise CkptbenchError(
        f"{PRICE_TABLE_ENV}={path}: cannot read the price table ({e}); expected JSON like"
        ' {"gs": {"storage_gb_month": 0.026, "put_per_1000": 0.005}}'
    ) from None


def checkpoint_cost(scheme: str, stored_bytes: int, requests: Mapping[str, float]) -> dict[str, float]:
  """Estimated USD for one checkpoint: its requests, and keeping its bytes a month.

  Args:
    scheme: "gs" or "s3".
    stored_bytes: bytes the checkpoint occupies in the store.
    requests: counts by kind ("put", "get", "list").

  Example:
    >>> checkpoint_cost("gs", 10**9, {"put": 1000})["requests_usd"]
    0.005
  """
  p = price_table()[scheme]
  requests_usd = (
      requests.get("put", 0) * p.put_per_1000
      + requests.get("get", 0) * p.get_per_1000
      + requests.get("list", 0) * p.list_per_1000
  ) / 1000
  return {"requests_usd": requests_usd, "storage_usd_per_month": stored_bytes / 1e9 * p.storage_gb_month}
