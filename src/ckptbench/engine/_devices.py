"""Configuring JAX before its backend starts: simulated CPU devices, HLO dumps."""

from __future__ import annotations

import os
import pathlib
import re

_DEVICE_FLAG = "--xla_force_host_platform_device_count"


def set_xla_flags(
    *,
    devices: int | None,
    hlo_dump_dir: pathlib.Path | None,
    processes: int = 1,
    override_devices: bool = False,
) -> None:
  """Adds simulated host devices and HLO dumping to XLA_FLAGS.

  Must run before the JAX backend starts (XLA reads the flags once). A device
  count the user already put in XLA_FLAGS wins over the suite's, unless
  `override_devices` (an explicit --devices).
  """
  flags = os.environ.get("XLA_FLAGS", "")
  if override_devices:
    flags = re.sub(_DEVICE_FLAG + r"=\S+", "", flags)
  if devices and _DEVICE_FLAG not in flags:
    per_process = max(1, -(-devices // max(processes, 1)))
    flags += f" {_DEVICE_FLAG}={per_process}"
  if hlo_dump_dir is not None:
    flags = re.sub(r"--xla_dump_to=\S+", "", flags)
    flags += f" --xla_dump_to={hlo_dump_dir} --xla_dump_hlo_as_proto --xla_dump_hlo_as_text"
  os.environ["XLA_FLAGS"] = " ".join(flags.split())
