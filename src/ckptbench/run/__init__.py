"""Running a suite: sweep expansion, scheduling, the runner, memory and failure
handling, plans, baselines, and the process set-up a run needs."""

from ckptbench.run._runner import RunSettings, SuiteOutcome, run_suite

__all__ = ["RunSettings", "SuiteOutcome", "run_suite"]
