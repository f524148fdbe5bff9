"""What the runner adds to a run's tags after the test_fn returned: inventory, roofline, memory over checkpoint bytes."""

from __future__ import annotations

import os
from typing import Any, Mapping

from ckptbench.api import MetricEntry, Tag, tag_value
from ckptbench.metrics._inventory import CheckpointInventory, scan_inventory
from ckptbench.metrics._roofline import StorageProbe, roofline_shares

INVENTORY_OP = "checkpoint"


def post_run_tags(
    tags: Mapping[str, MetricEntry],
    run_dir: str | os.PathLike,
    *,
    inventory: Any = None,
    probe: StorageProbe | None = None,
) -> tuple[dict[str, MetricEntry], dict[str, Any]]:
  """The inventory tags and roofline shares of one successful run.

  Args:
    tags: the run's tags (`merged(...)` / `Metrics.to_dict()` form).
    run_dir: the run's directory, scanned when `inventory` is None.
    inventory: `TestResult.inventory` (see `CheckpointInventory.from_result`),
      when the test_fn described the checkpoint itself.
    probe: the suite's storage probe; None adds no shares.

  Returns:
    (new tags: `checkpoint_5_inventory/*`, `<op>_4_throughput/*_of_<limit>` and
    `<op>_7_memory/host_peak_over_checkpoint`,
    the inventory as a JSON-friendly dict for the results record).

  Example:
    >>> new, inv = post_run_tags(tags, run_path, inventory=result.inventory, probe=probe)
    >>> tags.update(new); record["inventory"] = inv
  """
  inv = CheckpointInventory.from_result(inventory) if inventory is not None else scan_inventory(run_dir)
  new = {f"{INVENTORY_OP}_{key}": MetricEntry(v.value, v.unit) for key, v in inv.to_metrics().items()}
  if probe is not None:
    new.update(roofline_shares(tags, probe))
  new.update(peak_over_checkpoint(tags, new.get(f"{INVENTORY_OP}_5_inventory/total_gb")))
  return new, inv.to_dict()


_PEAK = "7_memory/host_rss_peak_diff_mib"
_RATIO = "7_memory/host_peak_over_checkpoint"
# The bytes one entry of a block moved, by Orbax's count: a save's tree, a load's tree.
_CHECKPOINT_GB = ("5_inventory/save_total_gb", "5_inventory/load_total_gb")


def peak_over_checkpoint(tags: Mapping[str, MetricEntry], directory_gb: MetricEntry | None) -> dict[str, MetricEntry]:
  """`<op>_7_memory/host_peak_over_checkpoint` for every block with a host peak and a checkpoint size.

  The size is Orbax's bytes for the block (per entry, for a block entered several times,
  whose peak is the largest entry's), else the most Orbax counted for an entry of another block of
  the run (a release that reports no save bytes still counts the load's: the same tree), else the
  run's checkpoint directory (`directory_gb`, compressed where the format compresses). A block with
  none of them, or a size of 0, gets none.

  Example:
    >>> peak_over_checkpoint({"save_7_memory/host_rss_peak_diff_mib": MetricEntry(128.0, "MiB"),
    ...                       "save_5_inventory/save_total_gb": MetricEntry(0.125, "GiB")}, None)
    {'save_7_memory/host_peak_over_checkpoint': MetricEntry(value=1.0, unit='ratio')}
  """
  per_block = {op: gb for op in {Tag.parse(t).op for t in tags} if (gb := _orbax_gb(tags, op))}
  out = {}
  for tag, peak in tags.items():
    parts = Tag.parse(tag)
    if parts.key != _PEAK:
      continue
    if parts.op in per_block:
      gb = per_block[parts.op]
    elif per_block:
      gb = max(per_block.values())
    elif directory_gb is not None:
      gb = directory_gb.value
    else:
      continue
    if gb > 0:
      ratio = tag_value(_RATIO, peak.value / (gb * 1024))
      out[f"{parts.op}_{_RATIO}"] = MetricEntry(ratio.value, ratio.unit)
  return out


def _orbax_gb(tags: Mapping[str, MetricEntry], op: str) -> float | None:
  """Orbax's bytes for one entry of block `op` (its save and load bytes over its entries), or None."""
  orbax_gb = [tags[f"{op}_{key}"].value for key in _CHECKPOINT_GB if f"{op}_{key}" in tags]
  if not orbax_gb:
    return None
  entries = tags.get(f"{op}_0_basics/count")
  return sum(orbax_gb) / (entries.value if entries is not None else 1.0)
