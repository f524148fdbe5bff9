"""Pathways: detecting its backend and setting up Orbax's Pathways checkpointing.

Everything here is a no-op off Pathways, except `check_colocated_python_supported`,
which says why a suite asking for colocated Python cannot run here.
"""

from __future__ import annotations

import contextlib

from ckptbench.errors import CkptbenchError


def is_pathways_backend() -> bool:
  """True when `pathwaysutils` is installed and says the Pathways backend is in use."""
  import jax  # noqa: PLC0415  (reading the config does not start a backend)

  # pathwaysutils answers from JAX's platforms setting (the "proxy" platform) but takes most of
  # a second to import: off Pathways, that setting answers alone.
  if "proxy" not in (jax.config.jax_platforms or ""):
    return False
  try:
    import pathwaysutils  # noqa: PLC0415  (optional: the pathways extra)
  except ImportError:
    return False
  return bool(pathwaysutils.is_pathways_backend_used())


def check_colocated_python_supported() -> None:
  """Fails unless colocated Python can run here (only on Pathways).

  Call it for a suite whose `checkpoint_config.load_with_colocated_python` is
  true, before any run starts.

  Raises:
    CkptbenchError: not running on the Pathways backend.
  """
  if not is_pathways_backend():
    raise CkptbenchError(
        "checkpoint_config.load_with_colocated_python: true needs the Pathways backend "
        "(install ckptbench[pathways] and run under Pathways); set it to false here"
    )


def pathways_load_context(load_with_colocated_python: bool) -> contextlib.AbstractContextManager:
  """The Orbax v1 context to load a checkpoint in: Pathways options on Pathways, nothing elsewhere.

  Args:
    load_with_colocated_python: load through colocated Python (the suite's
      `checkpoint_config.load_with_colocated_python`).

  Returns:
    On Pathways, an `orbax.checkpoint.v1.Context` whose Pathways checkpointing
    implementation follows `load_with_colocated_python`; elsewhere a context
    that changes nothing.

  Example:
    >>> with pathways_load_context(False):
    ...   pass
  """
  if not is_pathways_backend():
    return contextlib.nullcontext()
  from orbax.checkpoint import pathways  # noqa: PLC0415
  from orbax.checkpoint import v1 as ocp  # noqa: PLC0415

  context = ocp.Context()
  context.pathways.checkpointing_impl = pathways.CheckpointingImpl.from_options(
      use_colocated_python=load_with_colocated_python
  )
  return context
