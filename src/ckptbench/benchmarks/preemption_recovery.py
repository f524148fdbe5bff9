"""`preemption_recovery`: a training process dies mid-save; a fresh one resumes.

The suite's checkpoint data is saved as the initial training state. A training
process (a subprocess running the `checkpoint_manager` loop with the chosen
`api`) saves asynchronously every `save_interval_steps` steps and is killed
with SIGKILL in the middle of the save of `kill_step`: it sends the signal to
itself as soon as that save's temporary directory appears, so the kill always
lands while the step is half-written. A fresh process then recovers: it finds
the latest committed step, restores it, and checks it bit for bit against the
state recomputed from the initial one.

Measured: `recover` (from starting the fresh process until the state is
restored, interpreter and JAX start-up included), `recover_restore` (the
restore alone), `9_other/steps_lost` (kill_step minus the recovered step) and
`9_other/half_written_steps`. The run fails when the half-written step is
taken as committed, when no kill happened mid-save, or when the restored state
differs.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys

import jax

import ckptbench
from ckptbench.benchmarks.checkpoint_manager import APIS

_WORKER = "ckptbench.benchmarks._preemption_worker"


@dataclasses.dataclass(frozen=True, kw_only=True)
class PreemptionRecoveryOptions(ckptbench.BenchmarkOptions):
  """Options of `preemption_recovery`.

  Attributes:
    api: "checkpoint_manager" or "training_checkpointer" (see checkpoint_manager).
    save_interval_steps: the training process saves at steps 0, n, 2n, ...
    kill_step: the step whose async save is interrupted; a multiple of
      save_interval_steps, at least one interval in.
    process_timeout_s: limit for each subprocess.
    cold_cache: evict the checkpoints from the page cache before the fresh
      process starts, as after a host's restart
      (`recover_restore_0_basics/cold_cache_<how>`, see `ckptbench.evict_for_load`).
  """

  api: str | list[str] = "checkpoint_manager"
  save_interval_steps: int | list[int] = 2
  kill_step: int | list[int] = 6
  process_timeout_s: float = 300.0
  cold_cache: bool | list[bool] = True

  def invalid_reason(self) -> str | None:
    if self.api not in APIS:
      return f"api must be one of {', '.join(APIS)}"
    if self.save_interval_steps < 1:
      return "save_interval_steps must be at least 1"
    if self.kill_step < self.save_interval_steps or self.kill_step % self.save_interval_steps:
      return "kill_step must be a positive multiple of save_interval_steps"
    return None


def _child_env() -> dict[str, str]:
  env = dict(os.environ)
  flags = env.get("XLA_FLAGS", "")
  if jax.default_backend() == "cpu" and "xla_force_host_platform_device_count" not in flags:
    env["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={jax.device_count()}".strip()
  return env


def _run_worker(config_path, role: str, timeout: float) -> tuple[int, dict]:
  try:
    proc = subprocess.run(
        [sys.executable, "-m", _WORKER, str(config_path), role],
        env=_child_env(), capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
  except subprocess.TimeoutExpired:
    raise ckptbench.CkptbenchError(f"preemption_recovery: the {role} process ran past {timeout} s") from None
  lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
  if not lines:
    tail = "\n".join(proc.stderr.splitlines()[-15:])
    raise RuntimeError(f"preemption_recovery: the {role} process exited {proc.returncode}:\n{tail}")
  return proc.returncode, json.loads(lines[-1].removeprefix("RESULT "))


@ckptbench.benchmark_options(PreemptionRecoveryOptions)
class PreemptionRecoveryBenchmark(ckptbench.BenchmarksGenerator):
  """Kills training mid-save and measures recovery; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="preemption_recovery",
      measures="a training process SIGKILLed mid async save; a fresh process recovers: time to recover, steps lost, exact state",
      example="preemption_recovery.yaml",
      saves_with=("orbax",),
      cold_load="recover_restore",
  )

  orbax_requires = ("v1_save_load",)  # v1.save/v1.load (0.12+)

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    from orbax.checkpoint import v1 as ocp

    options = context.options
    if context.pytree is None or context.mesh is None:
      raise ckptbench.CkptbenchError(
          "preemption_recovery needs checkpoint data (checkpoint_config spec or preset) and a mesh_config"
      )
    metrics = ckptbench.Metrics()
    initial = context.path / "initial"
    ocp.save(initial, context.pytree)
    ckptbench.write_sharding_config(context.path / "initial_sharding.json", context.pytree)
    directory = context.path / "checkpoints"
    config_path = context.path / "worker.json"
    config_path.write_text(json.dumps({
        "api": options.api,
        "save_interval_steps": options.save_interval_steps,
        "kill_step": options.kill_step,
        "initial": str(initial),
        "initial_sharding": str(context.path / "initial_sharding.json"),
        "directory": str(directory),
        "mesh_axes": list(context.mesh.axis_names),
        "mesh_shape": list(context.mesh.devices.shape),
    }))  # fmt: skip

    with metrics.measure("train"):
      code, trained = _run_worker(config_path, "train", options.process_timeout_s)
    if code != -signal.SIGKILL:
      raise RuntimeError(f"preemption_recovery: the training process exited {code}, not by SIGKILL")
    if not trained["half_written"]:
      raise ckptbench.CkptbenchError(
          f"preemption_recovery: the save of step {options.kill_step} left no temporary"
          " directory to interrupt; the kill did not land mid-save"
      )
    metrics.record("train", "9_other/half_written_steps", len(trained["half_written"]), "count")

    ckptbench.evict_for_load(directory, metrics, "recover_restore", options.cold_cache)
    with metrics.measure("recover"):
      code, recovered = _run_worker(config_path, "recover", options.process_timeout_s)
    if "error" in recovered:
      raise ckptbench.DataMismatchError(f"preemption_recovery: {recovered['error']}")
    latest = recovered["latest_step"]
    if latest >= options.kill_step:
      raise ckptbench.DataMismatchError(
          f"preemption_recovery: recovered step {latest}, but step {options.kill_step} was only"
          " half-written when the process was killed"
      )
    metrics.record("recover_restore", "0_basics/time_s", recovered["restore_s"], "s")
    metrics.record("recover", "9_other/steps_lost", options.kill_step - latest, "count")
    return ckptbench.TestResult(metrics=metrics)
