"""What a ported module needs from this machine: a CUDA device, torch's process group."""

from __future__ import annotations

import functools
import inspect
import re
import types

# Calls that raise on a machine without a CUDA device (CPU-only torch included).
_NEEDS_CUDA = re.compile(r"\btorch\.cuda\.(set_device|synchronize|current_device|get_device_name)\(")


def _torch_modules(module: types.ModuleType) -> list[str]:
  return [v.__name__ for v in vars(module).values() if isinstance(v, types.ModuleType) and v.__name__.startswith("torch")]


def uses_torch_distributed(module: types.ModuleType) -> bool:
  """Whether the module imported `torch.distributed` (or a sub-module of it)."""
  return any(name.startswith("torch.distributed") for name in _torch_modules(module))


@functools.lru_cache(maxsize=None)
def _cuda_calls(module: types.ModuleType) -> tuple[str, ...]:
  try:
    source = inspect.getsource(module)
  except (OSError, TypeError):
    return ()
  return tuple(sorted({f"torch.cuda.{m.group(1)}" for m in _NEEDS_CUDA.finditer(source)}))


def missing_hardware(module: types.ModuleType | None) -> str | None:
  """Why this machine cannot run the module, or None.

  A module that imports torch and calls `torch.cuda.set_device` (or another
  call that needs a device) cannot run where torch sees no CUDA device.
  """
  if module is None or not _torch_modules(module):
    return None
  calls = _cuda_calls(module)
  if not calls:
    return None
  import torch

  if torch.cuda.is_available():
    return None
  return f"{module.__name__} calls {', '.join(calls)}: needs a CUDA device; torch sees none on this machine"
