"""What the runner adds to a run's tags after the test_fn returned: inventory and roofline."""

from __future__ import annotations

import os
from typing import Any, Mapping

from ckptbench.api import MetricEntry
from ckptbench.metrics._inventory import CheckpointInventory, scan_inventory
from ckptbench.metrics._roofline import StorageProbe, roofline_shares

INVENTORY_OP = "checkpoint"


def post_run_tags(
    tags: Mapping[str, MetricEntry],
    run_dir: str | os.PathLike,
    *,
    inventory: Mapping[str, Any] | None = None,
    probe: StorageProbe | None = None,
) -> tuple[dict[str, MetricEntry], dict[str, Any]]:
  """The inventory tags and roofline shares of one successful run.

  Args:
    tags: the run's tags (`merged(...)` / `Metrics.to_dict()` form).
    run_dir: the run's directory, scanned when `inventory` is None.
    inventory: `TestResult.inventory` (a `CheckpointInventory.to_dict()`), when
      the test_fn described the checkpoint itself.
    probe: the suite's storage probe; None adds no shares.

  Returns:
    (new tags: `checkpoint_5_inventory/*` and `<op>_4_throughput/*_of_<limit>`,
    the inventory as a JSON-friendly dict for the results record).

  Example:
    >>> new, inv = post_run_tags(tags, run_path, inventory=result.inventory, probe=probe)
    >>> tags.update(new); record["inventory"] = inv
  """
  inv = CheckpointInventory.from_dict(inventory) if inventory is not None else scan_inventory(run_dir)
  new = {f"{INVENTORY_OP}_{key}": MetricEntry(v.value, v.unit) for key, v in inv.to_metrics().items()}
  if probe is not None:
    new.update(roofline_shares(tags, probe))
  return new, inv.to_dict()
