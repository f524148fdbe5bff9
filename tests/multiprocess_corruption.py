"""Built-ins that damage their own checkpoints on disk, for the corrupted-data tests that need `launch`.

In-process tests corrupt through `builtin_support.corrupt_before`; a launched
process is another interpreter, so here the generator itself registers the
same kind of collector (public registry) before running the real built-in.
"""

from __future__ import annotations

import jax
from builtin_support import corrupt_before, roll_back_latest_step

from ckptbench.benchmarks.p2p_checkpoint_manager import P2PCheckpointManagerBenchmark


class RolledBackP2P(P2PCheckpointManagerBenchmark):
  """p2p_checkpoint_manager whose local latest step holds the step before's data when restored.

  With train_steps 5 the 6th measured block is the restore (5 saves before it);
  the local tier lies under the run directory (no --local_directory).
  """

  def test_fn(self, context):
    local = context.path / "local" / f"process_{jax.process_index()}"
    with corrupt_before(context.options.train_steps + 1, lambda: roll_back_latest_step(local)):
      return super().test_fn(context)
