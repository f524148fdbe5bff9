"""The collectors (registered into `ckptbench.api`'s registry on import), inventory, roofline."""

from ckptbench.metrics import _basic_collectors  # noqa: F401  (registers time, rss)
from ckptbench.metrics import _jax_monitoring  # noqa: F401  (registers jax_monitoring)
from ckptbench.metrics import _device_memory  # noqa: F401  (registers device_memory)
from ckptbench.metrics import _tensorstore  # noqa: F401  (registers tensorstore)
from ckptbench.metrics import _tracemalloc  # noqa: F401  (registers tracemalloc, opt-in)
from ckptbench.metrics._inventory import CheckpointInventory, scan_inventory
from ckptbench.api import NAMESPACES, TAGS, TagSpec, unit_of
from ckptbench.api import Metrics, default_collectors  # offered here: they read the registry filled above
from ckptbench.metrics._page_cache import evict_for_load, evict_from_page_cache
from ckptbench.metrics._post_run import post_run_tags
from ckptbench.metrics._basic_collectors import host_live_mib
from ckptbench.metrics._roofline import StorageProbe, cached_probe, probe_storage, roofline_shares

from ckptbench.metrics._store_requests import StoreRequests, store_cost_tags

__all__ = [
    "Metrics",
    "default_collectors",
    "StoreRequests",
    "store_cost_tags",
    "NAMESPACES",
    "TAGS",
    "CheckpointInventory",
    "StorageProbe",
    "TagSpec",
    "cached_probe",
    "evict_for_load",
    "evict_from_page_cache",
    "post_run_tags",
    "host_live_mib",
    "probe_storage",
    "roofline_shares",
    "scan_inventory",
    "unit_of",
]
