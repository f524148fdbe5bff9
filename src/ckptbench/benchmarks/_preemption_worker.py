"""The training and recovery processes of `preemption_recovery`.

Run as `python -m ckptbench.benchmarks._preemption_worker CONFIG.json train|recover`.
`train` trains from the initial state, saving asynchronously, and SIGKILLs
itself in the middle of the save of `kill_step`. `recover` finds the latest
committed step, restores it and checks it against the state recomputed from
the initial one. The last stdout line is `RESULT <json>`.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import sys
import time

START = time.perf_counter()


def _log_result(result: dict) -> None:
  print("RESULT " + json.dumps(result), flush=True)


def _half_written(directory: pathlib.Path, step: int) -> list[str]:
  """Temporary (uncommitted) directories of `step`."""
  if not directory.exists():
    return []
  return sorted(p.name for p in directory.iterdir() if p.name.startswith(f"{step}.") and "tmp" in p.name)


def main(config_path: str, role: str) -> int:
  import jax
  import numpy as np

  import ckptbench
  from ckptbench.benchmarks.checkpoint_manager import (
      CheckpointManagerOptions,
      Manager,
      train_step_fn,
  )

  config = json.loads(pathlib.Path(config_path).read_text())
  count = int(np.prod(config["mesh_shape"]))
  mesh = jax.sharding.Mesh(
      np.array(jax.devices()[:count]).reshape(config["mesh_shape"]), tuple(config["mesh_axes"])
  )
  shardings = ckptbench.read_sharding_config(config["initial_sharding"])
  abstract = ckptbench.abstract_from_checkpoint(config["initial"], mesh, shardings)
  from orbax.checkpoint import v1 as ocp

  initial = ocp.load(config["initial"], abstract)
  step_fn = train_step_fn(initial)
  options = CheckpointManagerOptions(
      api=config["api"], save_interval_steps=config["save_interval_steps"], max_to_keep=None
  )
  directory = pathlib.Path(config["directory"])
  manager = Manager(config["api"], directory, options)
  if role == "train":
    return _train_until_killed(manager, step_fn, initial, directory, config["kill_step"])
  return _recover(manager, step_fn, initial, directory)


def _train_until_killed(manager, step_fn, initial, directory: pathlib.Path, kill_step: int) -> int:
  """Trains and saves up to `kill_step`, then kills this process while that step's save is half written."""
  import jax

  state = initial
  for step in range(kill_step + 1):
    state = jax.block_until_ready(step_fn(state))
    if manager.should_save(step):
      manager.save(step, state)
  # The save of kill_step runs in the background: die once its files appear.
  deadline = time.perf_counter() + 30
  while not _half_written(directory, kill_step) and time.perf_counter() < deadline:
    time.sleep(0.001)
  _log_result({"killing_at_step": kill_step, "half_written": _half_written(directory, kill_step)})
  os.kill(os.getpid(), signal.SIGKILL)
  return 1  # not reached


def _recover(manager, step_fn, initial, directory: pathlib.Path) -> int:
  """Restores the latest committed step and checks it against the state training would have reached."""
  import ckptbench

  steps = manager.steps()
  if not steps:
    _log_result({"error": f"no committed step in {directory}"})
    return 3
  latest = steps[-1]
  t0 = time.perf_counter()
  restored = manager.restore(latest, ckptbench.abstract_pytree(initial))
  restore_s = time.perf_counter() - t0
  expected = initial
  for _ in range(latest + 1):
    expected = step_fn(expected)
  try:
    ckptbench.verify_pytree(expected, restored)
  except ckptbench.DataMismatchError as e:
    _log_result({"error": f"step {latest}: {e}"})
    return 3
  manager.close()
  _log_result({
      "latest_step": latest,
      "steps": steps,
      "restore_s": restore_s,
      "ready_s": time.perf_counter() - START,
  })
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1], sys.argv[2]))
