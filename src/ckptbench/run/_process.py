"""What a process needs before it runs a suite: devices, HLO dumps, the
distributed runtime, 64-bit types and quiet library logs.

XLA reads its flags once, when the JAX backend starts; so the flags are set
first, then jax.distributed starts, and only then does anything touch devices.
"""

from __future__ import annotations

import logging
import os
from typing import Sequence

from ckptbench.config import SuiteConfig, load_yaml_file, without_undeclared_axes
from ckptbench.config import apply_overrides, parse_override
from ckptbench.distributed import initialize
from ckptbench.run._devices import set_xla_flags
from ckptbench.run._settings import RunSettings


# A suite without a mesh runs on what JAX has, as Orbax's runner does; on CPU that is
# this many simulated devices (a TPU host's count, the guide's), so that benchmarks
# that split the devices themselves (snapshotter's slices) have some to split.
MESHLESS_DEVICES = 8


def mesh_sizes(path: str | os.PathLike, overrides: Sequence[str] = ()) -> list[int]:
  """The device counts of a suite file's usable meshes (after `--set`), read without JAX; [] if unknown.

  Only the meshes matter here (how many devices to simulate); the full
  validation afterwards reports any problem with its file and line. Meshes
  the suite will skip (axes their mesh_axes lack) are left out.
  """
  try:
    doc = apply_overrides(load_yaml_file(path), [parse_override(o) for o in overrides])
    data, skipped = without_undeclared_axes(doc.data)
    config = SuiteConfig.model_validate(data)
  except Exception:  # noqa: BLE001  (reported properly by load_suite)
    return []
  unusable = {s.index for s in skipped}
  meshes = config.all_mesh_configs()
  if meshes == [None]:
    return [MESHLESS_DEVICES]
  return [m.num_devices for i, m in enumerate(meshes) if m is not None and i not in unusable]


def devices_needed(path: str | os.PathLike, overrides: Sequence[str] = ()) -> int | None:
  """The largest usable mesh of a suite file (after `--set`), read without JAX; None if unknown."""
  return max(mesh_sizes(path, overrides), default=None)


def prepare_process(settings: RunSettings, mesh_sizes: list[int]) -> None:
  """Sets XLA flags for the suite's meshes, starts jax.distributed, enables x64.

  Args:
    settings: the run's settings (devices, HLO dump, distributed mode, verbosity).
    mesh_sizes: the device counts of the suite's meshes, read before JAX starts.
  """
  set_xla_flags(
      devices=settings.devices or max(mesh_sizes, default=None),
      hlo_dump_dir=settings.output_dir / "hlo_dump" if settings.enable_hlo_dump else None,
      processes=1 if settings.devices else int(os.environ.get("JAX_NUM_PROCESSES", "1")),
      override_devices=bool(settings.devices),
  )
  initialize(settings.distributed)  # after XLA_FLAGS, before the JAX backend starts
  if not settings.verbose:
    _quiet_libraries()
  import jax  # noqa: PLC0415  (after the flags: importing is fine, starting the backend is not)

  jax.config.update("jax_enable_x64", True)


def _quiet_libraries() -> None:
  for name in ("absl", "jax", "orbax", "tensorstore"):
    logging.getLogger(name).setLevel(logging.ERROR)
  # The fsspec store clients log a traceback when their retries run out, then raise to the
  # caller: the run's record holds that error already (--verbose shows both).
  for name in ("gcsfs", "s3fs"):
    logging.getLogger(name).setLevel(logging.CRITICAL)
  try:
    from absl import logging as absl_logging  # noqa: PLC0415

    absl_logging.set_verbosity(absl_logging.ERROR)
  except ImportError:
    pass
