"""Running a suite: process set-up, sweep expansion, scheduling, the runner,
memory and failure handling, plans, and baselines after the run.

`run(suite, settings)` is the one entry point; `ckptbench run` calls it.
"""

from ckptbench.run._entry import RunOutcome, run
from ckptbench.run._settings import RunSettings

from ckptbench.run._devices import set_xla_flags
from ckptbench.run._plan_view import describe_plan, format_bytes

__all__ = ["RunOutcome", "RunSettings", "run"]
