"""Shows, with Orbax alone, why Orbax's v0_checkpointer_cancel_benchmark fails its own assertion.

Usage: python measurements/orbax_v0_cancel_listing.py [ROWS COLS DELAY_S DATA MODEL]

Does what the module does with `perform_cancellation: true`, without ckptbench
or Orbax's runner: a fresh v0 CheckpointManager on an empty directory saves
step 1 asynchronously (an array of ROWS x COLS float32 sharded over a DATA x
MODEL mesh of simulated CPU devices), sleeps DELAY_S, cancels through the
manager's checkpointer (`mngr._checkpointer.cancel()`, the module's call; v0
has no public one) and waits. Prints what is on disk and what the manager
lists, before and after `reload()`. With no arguments it runs Orbax's own suite
options (1024x2048 on 2x2, 1 s: the save commits before the cancel) and an
in-flight cancel (4096x4096 at once: only the temporary directory is left
on this machine). In both, `all_steps()` is [1], so the module's `step not in
all_steps()` fails: `CheckpointManager.save()` lists the step in memory before
its background commit, and the checkpointer's `cancel()` only cancels that
commit; the manager's `wait_until_finished()` unlists a step only when the
finalize thread raised (and then raises too), which a cancel never makes it do.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

CASES = (("1024", "2048", "1", "2", "2"), ("4096", "4096", "0", "2", "2"))


def one(rows: int, cols: int, delay: float, data: int, model: int) -> None:
  """Saves, cancels and waits once; prints the disk and the manager's listing."""
  import jax
  import numpy as np
  import orbax.checkpoint as ocp
  from etils import epath

  mesh = jax.sharding.Mesh(np.array(jax.devices()[: data * model]).reshape(data, model), ("data", "model"))
  sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("data", "model"))
  pytree = {"array": jax.device_put(np.ones((rows, cols), np.float32), sharding)}
  with tempfile.TemporaryDirectory() as scratch:
    path = epath.Path(scratch) / "ckpt"
    mngr = ocp.CheckpointManager(path, options=ocp.CheckpointManagerOptions(create=True))
    mngr.save(1, args=ocp.args.StandardSave(pytree))
    time.sleep(delay)
    mngr._checkpointer.cancel()  # pylint: disable=protected-access
    mngr.wait_until_finished()
    print(f"orbax-checkpoint {ocp.__version__}, {rows}x{cols} float32 ({rows * cols * 4 / 2**20:g} MiB)"
          f" on a {data}x{model} mesh, cancelled after {delay:g} s")  # fmt: skip
    print(f"  on disk: {sorted(p.name for p in path.iterdir())}")
    print(f"  all_steps(): {list(mngr.all_steps())}, latest_step(): {mngr.latest_step()}")
    mngr.reload()
    print(f"  after reload(): all_steps(): {list(mngr.all_steps())}, latest_step(): {mngr.latest_step()}")
    mngr.close()


def main(argv: list[str]) -> int:
  if argv:
    rows, cols, delay, data, model = argv
    one(int(rows), int(cols), float(delay), int(data), int(model))
    return 0
  env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  env.update(JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=4")
  for case in CASES:  # a process each: a fresh manager and JAX, as each benchmark run has
    done = subprocess.run([sys.executable, __file__, *case], env=env, capture_output=True, text=True)
    print(done.stdout, end="")
    if done.returncode:
      print(done.stderr[-2000:], file=sys.stderr)
      return done.returncode
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
