"""Running a suite: process set-up, sweep expansion, scheduling, the runner,
memory and failure handling, plans, and baselines after the run.

`run(suite, settings)` is the one entry point; `ckptbench run` calls it.
"""

from ckptbench.run._entry import RunOutcome, run
from ckptbench.run._settings import RunSettings

__all__ = ["RunOutcome", "RunSettings", "run"]
