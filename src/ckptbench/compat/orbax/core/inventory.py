"""Orbax's `core.inventory` on ckptbench: `scan_checkpoint` is ckptbench's `scan_inventory` (local, gs://,
s3://) in Orbax's fields, which ckptbench's runner takes (or Orbax's own) from a `TestResult`."""

from __future__ import annotations

import dataclasses
import os
import types
from typing import Any, Mapping

import ckptbench


@dataclasses.dataclass(frozen=True)
class CheckpointInventory:
  """A checkpoint directory's files and sizes, in Orbax's fields."""

  total_bytes: int = 0
  file_count: int = 0
  small_file_count: int = 0  # files under 1 MiB
  small_file_pct: float = 0.0  # their share of the files (0..1)
  largest_file_bytes: int = 0
  smallest_file_bytes: int = 0  # 0 without files
  format: Mapping[str, int] = dataclasses.field(default_factory=dict)  # files by kind: ocdbt, zarr3, metadata, other


def scan_checkpoint(path: str | os.PathLike) -> CheckpointInventory:
  """The inventory of `path` (empty when it does not exist)."""
  return from_ckptbench(ckptbench.scan_inventory(str(path)))


def from_record(inventory: Mapping[str, Any]) -> CheckpointInventory:
  """Orbax's inventory from a run record's (`RunRecord.inventory`, ckptbench's fields)."""
  return from_ckptbench(types.SimpleNamespace(**inventory))


def from_ckptbench(found: Any) -> CheckpointInventory:
  """Orbax's inventory from ckptbench's (`ckptbench.scan_inventory`)."""
  kinds = {"ocdbt": found.ocdbt_files, "zarr3": found.zarr_files, "metadata": found.metadata_files, "other": found.other_files}
  return CheckpointInventory(
      total_bytes=found.total_bytes,
      file_count=found.file_count,
      small_file_count=found.small_file_count,
      small_file_pct=found.small_file_count / found.file_count if found.file_count else 0.0,
      largest_file_bytes=found.largest_file_bytes,
      smallest_file_bytes=found.smallest_file_bytes,
      format={k: n for k, n in kinds.items() if n},
  )
