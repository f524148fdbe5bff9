"""`multihost_dispatchers`: the cost of running a function next to the devices through Orbax's dispatcher.

Orbax's `ColocatedPythonDispatcher` (what its Pathways checkpointing uses to
run serialization on the hosts of the devices) sends a Python function to the
colocated CPU devices of the arrays and returns its result as arrays. Three
calls, as the peer makes them: without result specs (the function's output is
dropped; a dummy array signals completion), with a dummy input on
`device_count` devices, and with result specs (the function returns arrays:
here the input plus one, so the round trip carries data both ways).

Measured: `dispatch_without_result_specs`, `..._block_until_ready`,
`dispatch_with_dummy_result_array`, `..._block_until_ready`,
`dispatch_with_result_specs`. Verified: each dummy result is the replicated
`True` Orbax promises, and the returned array equals the input plus one with
the input's sharding.

The peer's `use_colocated: false` names no dispatcher (Orbax 0.12.8 has no
other; the peer's own run fails on it): such sweep points are not run, with
that reason. Colocated Python needs `cloudpickle` (the `pathways` extra) and
one process: on CPU the "colocated CPU devices" are the devices themselves, no
Pathways or TPU host is involved; the record's notes say so.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

import ckptbench

_NAME = "multihost_dispatchers"


@dataclasses.dataclass(frozen=True, kw_only=True)
class MultihostDispatchersOptions(ckptbench.BenchmarkOptions):
  """Options of `multihost_dispatchers` (the peer's names).

  Attributes:
    use_colocated: dispatch through colocated Python (the only dispatcher).
    device_count: devices of the dummy-input dispatch (None: all).
  """

  use_colocated: bool | Sequence[bool] = False
  device_count: int | None | Sequence[int | None] = None

  def invalid_reason(self) -> str | None:
    if not self.use_colocated:
      return "use_colocated: false names no dispatcher (orbax-checkpoint 0.12.8 has only ColocatedPythonDispatcher)"
    if self.device_count is not None and self.device_count < 1:
      return "device_count must be positive (or null for all devices)"
    return None

  def unsupported_reason(self) -> str | None:
    if importlib.util.find_spec("cloudpickle") is None:
      return "colocated Python needs cloudpickle: pip install 'ckptbench[pathways]'"
    return None


def _plus_one(array: jax.Array) -> jax.Array:
  """Runs on the colocated CPU devices: the input plus one, same sharding."""
  return array + 1


def _check_dummy(result: Any, what: str) -> None:
  if not (isinstance(result, jax.Array) and result.shape == () and bool(np.asarray(result.addressable_data(0)))):
    raise ckptbench.DataMismatchError(f"{_NAME}: {what} returned {result!r}, not the replicated True that signals done")


@ckptbench.benchmark_options(MultihostDispatchersOptions)
class MultihostDispatchersBenchmark(ckptbench.BenchmarksGenerator):
  """Three dispatches through colocated Python; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="multihost_dispatchers",
      measures="Orbax's `ColocatedPythonDispatcher`: the cost of running a function next to the devices, with and without result arrays",
      example="multihost_dispatchers.yaml",
      extras=("pathways",),
      orbax_alias="multihost_dispatchers_benchmark.MultihostDispatchersBenchmark",
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    from orbax.checkpoint._src.multihost import dispatchers

    options: MultihostDispatchersOptions = context.options
    if jax.process_count() > 1:
      raise ckptbench.CkptbenchError(
          f"{_NAME}: colocated Python is single-controller (Pathways); run it with `ckptbench run`, not `launch`"
      )
    array = (context.pytree or {}).get("array") if isinstance(context.pytree, dict) else None
    if not isinstance(array, jax.Array):
      raise ckptbench.CkptbenchError(f"{_NAME} needs an array named 'array' in checkpoint_config.spec (as the peer's suite)")
    devices = jax.devices()
    if options.device_count is not None:
      if options.device_count > len(devices):
        raise ckptbench.CkptbenchError(f"{_NAME}: device_count {options.device_count} > {len(devices)} devices")
      devices = devices[: options.device_count]
    dispatcher = dispatchers.ColocatedPythonDispatcher()
    metrics = ckptbench.Metrics()

    with metrics.measure("dispatch_without_result_specs"):
      done = dispatcher.dispatch(lambda _: None, input_arrays=array)
    with metrics.measure("dispatch_without_result_specs_block_until_ready"):
      _check_dummy(jax.block_until_ready(done), "a dispatch without result specs")

    with metrics.measure("dispatch_with_dummy_result_array"):
      done = dispatcher.dispatch(lambda _: None, input_arrays=dispatchers.get_dummy_input_array(devices))
    with metrics.measure("dispatch_with_dummy_result_array_block_until_ready"):
      _check_dummy(jax.block_until_ready(done), f"a dispatch on {len(devices)} devices")

    spec = jax.ShapeDtypeStruct(array.shape, array.dtype, sharding=array.sharding)
    with metrics.measure("dispatch_with_result_specs"), context.trace("dispatch_with_result_specs"):
      result = jax.block_until_ready(dispatcher.dispatch(_plus_one, input_arrays=array, result_specs=spec))
    with metrics.measure("verify", ["time"]):
      if not result.sharding.is_equivalent_to(array.sharding, array.ndim):
        raise ckptbench.DataMismatchError(f"{_NAME}: result sharding {result.sharding}, expected {array.sharding}")
      ckptbench.verify_pytree({"array": array + 1}, {"array": result})
    metrics.record("dispatch_with_result_specs", "9_other/devices", len(devices), "count")
    notes = (
        "colocated Python on the CPU backend: the colocated CPU devices are the devices themselves;"
        " no Pathways controller, TPU host or device-to-host transfer is involved",
    )
    return ckptbench.TestResult(metrics=metrics, notes=notes)
