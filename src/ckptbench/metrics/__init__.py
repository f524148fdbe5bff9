"""Metric collection: `Metrics.measure()` and the collector registry."""

from ckptbench.metrics import _basic_collectors  # noqa: F401  (registers time, rss)
from ckptbench.metrics._collector import (
    Collector,
    MetricValue,
    default_collectors,
    known_collectors,
    register_collector,
)
from ckptbench.metrics._metrics import Metrics, collect_created_metrics, merged

__all__ = [
    "Collector",
    "MetricValue",
    "Metrics",
    "collect_created_metrics",
    "default_collectors",
    "known_collectors",
    "merged",
    "register_collector",
]
