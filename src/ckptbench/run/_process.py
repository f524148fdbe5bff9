"""What a process needs before it runs a suite: devices, HLO dumps, the
distributed runtime, 64-bit types and quiet library logs.

XLA reads its flags once, when the JAX backend starts; so the flags are set
first, then jax.distributed starts, and only then does anything touch devices.
"""

from __future__ import annotations

import logging
import os

from ckptbench.config import SuiteConfig, load_yaml_file
from ckptbench.distributed import initialize
from ckptbench.run._devices import set_xla_flags
from ckptbench.run._settings import RunSettings


def first_look(path: str | os.PathLike) -> SuiteConfig | None:
  """A suite file's top-level config, read without JAX; None when it does not validate.

  Only the meshes matter here (how many devices to simulate); the full
  validation afterwards reports any problem with its file and line.
  """
  try:
    return SuiteConfig.model_validate(load_yaml_file(path).data)
  except Exception:  # noqa: BLE001  (reported properly by load_suite)
    return None


def devices_needed(path: str | os.PathLike) -> int | None:
  """The largest mesh of a suite file, read without JAX; None if unknown."""
  return _largest_mesh(first_look(path))


def _largest_mesh(config: SuiteConfig | None) -> int | None:
  sizes = [] if config is None else [m.num_devices for m in config.all_mesh_configs() if m is not None]
  return max(sizes) if sizes else None


def prepare_process(settings: RunSettings, config: SuiteConfig | None) -> None:
  """Sets XLA flags for the suite's meshes, starts jax.distributed, enables x64.

  Args:
    settings: the run's settings (devices, HLO dump, distributed mode, verbosity).
    config: the suite's top-level config, read before JAX starts; None when it
      could not be read (the full validation reports why).
  """
  set_xla_flags(
      devices=settings.devices or _largest_mesh(config),
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
  try:
    from absl import logging as absl_logging  # noqa: PLC0415

    absl_logging.set_verbosity(absl_logging.ERROR)
  except ImportError:
    pass
