"""Configuring JAX before its backend starts: simulated CPU devices, HLO dumps."""

from __future__ import annotations

import os
import pathlib
import re

from ckptbench.config._mesh_list import without_undeclared_axes
from ckptbench.config._models import SuiteConfig
from ckptbench.config._yaml import load_yaml_file

_DEVICE_FLAG = "--xla_force_host_platform_device_count"


def devices_needed(config_file: str) -> int | None:
  """The largest mesh of a suite, read without importing JAX; None if unknown.

  Full validation happens afterwards; this first look must not fail loudly.
  """
  try:
    data, skipped = without_undeclared_axes(load_yaml_file(config_file).data)
    config = SuiteConfig.model_validate(data)
  except Exception:  # noqa: BLE001  (reported properly by the full validation)
    return None
  unusable = {s.index for s in skipped}
  sizes = [m.num_devices for i, m in enumerate(config.all_mesh_configs()) if m is not None and i not in unusable]
  return max(sizes) if sizes else None


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
