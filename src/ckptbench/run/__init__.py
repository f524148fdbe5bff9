"""Running a suite: process set-up, sweep expansion, scheduling, the runner,
memory and failure handling, plans, and baselines after the run.

`run(suite, settings)` is the one entry point; `ckptbench run` calls it.

Names load on first use, so `ckptbench plan` and the command line's start do not
import JAX (the runner does, once the process is set up).
"""

from ckptbench._lazy import lazy_getattr

_EXPORTS = {
    "DRIVEN_READY": "ckptbench.run._rounds",
    "DRIVEN_ROUND_DONE": "ckptbench.run._rounds",
    "Repeats": "ckptbench.run._rounds",
    "RepeatsDone": "ckptbench.run._rounds",
    "RoundClock": "ckptbench.run._rounds",
    "round_order": "ckptbench.run._rounds",
    "rounds_until_decided": "ckptbench.run._auto",
    "time_budget": "ckptbench.run._rounds",
    "RunOutcome": "ckptbench.run._entry",
    "RunSettings": "ckptbench.run._settings",
    "describe_plan": "ckptbench.run._plan_view",
    "format_bytes": "ckptbench.run._sizes",
    "run": "ckptbench.run._entry",
    "set_xla_flags": "ckptbench.run._devices",
    "ScaleSettings": "ckptbench.run._scale",
    "measured_latency": "ckptbench.run._scale_store",
    "pause_while_starting": "ckptbench.run._noise",
    "scale": "ckptbench.run._scale",
    "store_profile": "ckptbench.run._scale_store",
}
__getattr__ = lazy_getattr(globals(), _EXPORTS)

__all__ = ["RunOutcome", "RunSettings", "run"]
