"""What a process needs before it runs a suite: devices, HLO dumps, the
distributed runtime, 64-bit types and quiet library logs.

XLA reads its flags once, when the JAX backend starts; so the flags are set
first, then jax.distributed starts, and only then does anything touch devices.
"""

from __future__ import annotations

import logging
import os
from ckptbench.distributed import initialize
from ckptbench.engine._devices import set_xla_flags
from ckptbench.engine._settings import RunSettings


def prepare_process(settings: RunSettings, devices_needed: int | None) -> None:
  """Sets XLA flags for the suite's meshes, starts jax.distributed, enables x64.

  Args:
    settings: the run's settings (devices, HLO dump, distributed mode, verbosity).
    devices_needed: the devices of the suite's largest mesh (None: no mesh).
  """
  set_xla_flags(
      devices=settings.devices or devices_needed,
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
