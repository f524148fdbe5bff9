"""Orbax 0.12.8's `simdevice:` block, as ckptbench runs it: on simulated CPU devices.

Orbax's runner hands the block to SimDevice, a PJRT plugin that fabricates a TPU
cluster without memory or math (not installable here). ckptbench runs the suite
on as many CPU devices as the topology has chips, split over `num_processes`
local processes (`ckptbench run` starts them, as Orbax's runner starts its
simulated hosts): the arrays hold real data, the math is done, and every time is
this machine's. The run says so (`emulation_notes`) and records its backend as
emulated (`emulated_backend`), so its timings are never compared with a TPU's.

The block is read on its own (`read_simdevice`) before anything else, because
the process count and the device count must be known before JAX starts.
"""

from __future__ import annotations

import difflib
import pathlib
from typing import Sequence

import pydantic

from ckptbench.config._models import SimDeviceConfig
from ckptbench.config._overrides import apply_overrides, parse_override
from ckptbench.config._yaml import LocatedDocument, load_yaml_file

KEY = "simdevice"


def read_simdevice(path: str | pathlib.Path, overrides: Sequence[str] = ()) -> SimDeviceConfig | None:
  """The suite file's `simdevice:` block, validated; None when it has none.

  Raises:
    ConfigError: naming the file, line and key of a bad block (or the override).
  """
  doc = apply_overrides(load_yaml_file(path), [parse_override(text) for text in overrides])
  return simdevice_of(doc)


def simdevice_of(doc: LocatedDocument) -> SimDeviceConfig | None:
  """The `simdevice:` block of a parsed suite, validated; None when it has none."""
  if not isinstance(doc.data, dict) or doc.data.get(KEY) is None:
    return None
  block = doc.data[KEY]
  if not isinstance(block, dict):
    raise doc.error(
        f"simdevice is a mapping (device_type, topology, num_processes, fabricated_fill_seed), got {block!r}", (KEY,))
  known = list(SimDeviceConfig.model_fields)
  for key in block:
    if key not in known:
      close = difflib.get_close_matches(str(key), known, n=1)
      hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(known)}"
      raise doc.error(f"unknown key {key!r}; {hint}", (KEY, key))
  try:
    return SimDeviceConfig.model_validate(block)
  except pydantic.ValidationError as e:
    first = e.errors()[0]
    where = [part for part in first["loc"] if part in block] or []
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "missing":
      message = f"required key {first['loc'][0]!r} is missing"
    elif where and first["type"] != "value_error":  # pydantic's own messages do not show the value
      message += f", got {block[where[0]]!r}"
    raise doc.error(message, (KEY, *where[:1])) from None


def emulated_backend(simdevice: SimDeviceConfig) -> str:
  """The backend a run of this block records: `cpu (emulating tpu v6e 2x2x1, 2 processes)`."""
  processes = f"{simdevice.num_processes} process{'es' if simdevice.num_processes > 1 else ''}"
  return f"cpu (emulating {simdevice.describe()}, {processes})"


def emulation_notes(simdevice: SimDeviceConfig) -> list[str]:
  """What `plan` and the run say about the block: how it is emulated and what differs from SimDevice."""
  per_process = simdevice.num_devices // simdevice.num_processes
  notes = [
      f"simdevice: {simdevice.describe()} ({simdevice.num_devices} chips) runs as {simdevice.num_devices}"
      f" simulated CPU devices in {simdevice.num_processes} local process(es) of {per_process}; unlike"
      " SimDevice, the arrays hold real data, the math is done, and every time is this machine's CPU and"
      " disk, not a TPU's: the backend is recorded as emulated and never compared with a TPU's"
  ]
  if simdevice.fabricated_fill_seed is not None:
    notes.append(
        f"simdevice.fabricated_fill_seed {simdevice.fabricated_fill_seed}: not used; SimDevice fabricates"
        " the bytes of arrays it never computed, here the arrays are real (checkpoint_config's fill and"
        " random_seed make them)"
    )
  return notes
