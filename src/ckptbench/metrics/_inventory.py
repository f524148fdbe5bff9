"""The checkpoint inventory: what a checkpoint directory holds and in which layout.

Small files are the object-store canary: a checkpoint made of thousands of
sub-MiB files loses most of its bandwidth to per-request latency on GCS or S3.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from typing import Any, Mapping

from ckptbench.api import tag_value
from ckptbench.api import MetricValue
from ckptbench.storage import is_store_url, list_objects, parse_store_url

SMALL_FILE_BYTES = 1 << 20
_GIB = float(1 << 30)
_METADATA_NAMES = frozenset({
    "_METADATA", "_CHECKPOINT_METADATA", "_sharding", "_ROOT_METADATA",
    "commit_success.txt", "orbax.checkpoint", "descriptor.pbtxt",
})
_ZARR_META = frozenset({".zarray", ".zattrs", ".zgroup", ".zmetadata", "zarr.json"})


@dataclasses.dataclass(frozen=True)
class CheckpointInventory:
  """A checkpoint directory's files, sizes and layout.

  Attributes:
    path: the directory scanned.
    total_bytes: bytes of all regular files below it.
    file_count: regular files below it (symlinks are not followed).
    small_file_count: files smaller than 1 MiB.
    largest_file_bytes: the largest file's size.
    largest_file: its path relative to `path` ("" when there are no files).
    ocdbt_files / zarr_files / metadata_files / other_files: files by kind.
    layouts: the layouts found, in a fixed order: "OCDBT", "Zarr v3",
      "Zarr v2", "safetensors", "Orbax metadata".
  """

  path: str
  total_bytes: int = 0
  file_count: int = 0
  small_file_count: int = 0
  largest_file_bytes: int = 0
  largest_file: str = ""
  ocdbt_files: int = 0
  zarr_files: int = 0
  metadata_files: int = 0
  other_files: int = 0
  layouts: tuple[str, ...] = ()

  @property
  def layout(self) -> str:
    """The layouts as one readable string, e.g. "OCDBT + Orbax metadata"; "empty" or "unknown"."""
    if not self.file_count:
      return "empty"
    return " + ".join(self.layouts) or "unknown"

  def to_metrics(self) -> dict[str, MetricValue]:
    """`{"5_inventory/<metric>": MetricValue}` for the results (see docs/metrics.md)."""
    share = self.small_file_count / self.file_count if self.file_count else 0.0
    values = {
        "5_inventory/total_gb": self.total_bytes / _GIB,
        "5_inventory/largest_file_gb": self.largest_file_bytes / _GIB,
        "5_inventory/file_count": self.file_count,
        "5_inventory/small_file_count": self.small_file_count,
        "5_inventory/small_file_share": share,
        "5_inventory/ocdbt_file_count": self.ocdbt_files,
        "5_inventory/zarr_file_count": self.zarr_files,
        "5_inventory/metadata_file_count": self.metadata_files,
    }
    return {tag: tag_value(tag, float(x)) for tag, x in values.items()}

  def to_dict(self) -> dict:
    """JSON-friendly form (for `TestResult.inventory` and the manifest), `layout` included."""
    return {**dataclasses.asdict(self), "layouts": list(self.layouts), "layout": self.layout}

  @classmethod
  def from_dict(cls, data: Mapping[str, Any]) -> "CheckpointInventory":
    """The inverse of `to_dict()`; unknown keys (such as "layout") are ignored."""
    names = {f.name for f in dataclasses.fields(cls)}
    fields = {k: v for k, v in data.items() if k in names}
    return cls(**{**fields, "layouts": tuple(fields.get("layouts", ()))})


def _kind(rel_parts: tuple[str, ...], zarr_dirs: set[str]) -> str:
  name = rel_parts[-1]
  if name in _METADATA_NAMES or "array_metadatas" in rel_parts[:-1]:
    return "metadata"
  if name == "manifest.ocdbt" or any(p.startswith("ocdbt.process_") for p in rel_parts[:-1]):
    return "ocdbt"
  if name in _ZARR_META or "/".join(rel_parts[:-1]) in zarr_dirs:
    return "zarr"
  # OCDBT data files of the merged database live in d/ beside manifest.ocdbt.
  if len(rel_parts) >= 2 and rel_parts[-2] == "d":
    return "ocdbt"
  return "other"


def scan_inventory(path: str | os.PathLike) -> CheckpointInventory:
  """Walks `path` (a directory, or a gs:// or s3:// location) and returns its inventory.

  A missing directory gives an empty inventory. An object-store location is
  listed through the store's API (objects and their sizes).

  Args:
    path: a checkpoint directory (or a run directory holding several).

  Example:
    >>> inv = scan_inventory(run_dir)
    >>> inv.layout, inv.to_metrics()["5_inventory/total_gb"].value
    ('OCDBT + Orbax metadata', 0.125)
  """
  if is_store_url(path):
    objects = list_objects(parse_store_url(str(path)))
    return inventory_of(str(path), [(tuple(o.key.split("/")), o.size) for o in objects])
  root = pathlib.Path(path)
  files: list[tuple[tuple[str, ...], int]] = []
  for dirpath, _, filenames in os.walk(root):
    rel_dir = pathlib.Path(dirpath).relative_to(root).parts
    for name in filenames:
      full = os.path.join(dirpath, name)
      try:
        st = os.stat(full, follow_symlinks=False)
      except OSError:
        continue  # removed while we walked (e.g. an old step being deleted)
      if not os.path.isfile(full) or os.path.islink(full):
        continue
      files.append((rel_dir + (name,), st.st_size))
  return inventory_of(str(root), files)


def inventory_of(path: str, files: list[tuple[tuple[str, ...], int]]) -> CheckpointInventory:
  """The inventory of `files` ((path parts relative to `path`, size) pairs)."""
  zarr_dirs: set[str] = set()
  zarr_versions: set[str] = set()
  for parts, _ in files:
    if parts[-1] in _ZARR_META:
      zarr_dirs.add("/".join(parts[:-1]))
      zarr_versions.add("Zarr v3" if parts[-1] == "zarr.json" else "Zarr v2")
  counts = {"ocdbt": 0, "zarr": 0, "metadata": 0, "other": 0}
  largest, largest_name, small, total = 0, "", 0, 0
  safetensors = False
  for parts, size in files:
    # Chunk files sit below the array directory (c/0/1 in Zarr v3, 0.1 in v2).
    kind = _kind(parts, zarr_dirs) if not _under(parts, zarr_dirs) else "zarr"
    counts[kind] += 1
    total += size
    small += size < SMALL_FILE_BYTES
    safetensors |= parts[-1].endswith(".safetensors")
    if size > largest or not largest_name:
      largest, largest_name = size, "/".join(parts)
  layouts = []
  if counts["ocdbt"]:
    layouts.append("OCDBT")
  layouts += [v for v in ("Zarr v3", "Zarr v2") if v in zarr_versions]
  if safetensors:
    layouts.append("safetensors")
  if counts["metadata"]:
    layouts.append("Orbax metadata")
  return CheckpointInventory(
      path=path, total_bytes=total, file_count=len(files), small_file_count=small,
      largest_file_bytes=largest, largest_file=largest_name, ocdbt_files=counts["ocdbt"],
      zarr_files=counts["zarr"], metadata_files=counts["metadata"], other_files=counts["other"],
      layouts=tuple(layouts),
  )


def _under(parts: tuple[str, ...], zarr_dirs: set[str]) -> bool:
  """True for a file strictly below a Zarr array directory (its chunks)."""
  for i in range(1, len(parts) - 1):
    if "/".join(parts[:i]) in zarr_dirs:
      return True
  return False
