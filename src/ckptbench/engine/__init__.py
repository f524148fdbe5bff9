"""The run engine: process set-up, sweep expansion, scheduling, the runner,
memory and failure handling, plans, and baselines after the run.

`run(suite, settings)` is the one entry point, public as `ckptbench.run`; `ckptbench run` calls it.

Names load on first use, so `ckptbench plan` and the command line's start do not
import JAX (the runner does, once the process is set up).
"""

from typing import TYPE_CHECKING

from ckptbench._lazy import lazy_face

if TYPE_CHECKING:  # the face, each name once: lazy_face reads it, type checkers and IDEs resolve it
  from ckptbench.engine.loop._rounds import (
      DRIVEN_READY,
      DRIVEN_ROUND_DONE,
      Repeats,
      RepeatsDone,
      RoundClock,
      round_order,
      time_budget,
  )
  from ckptbench.engine.loop._auto import rounds_until_decided
  from ckptbench.engine._entry import RunOutcome, run
  from ckptbench.engine.race._tune import TUNE_FILE, TuneOutcome, tune
  from ckptbench.engine.race._spec import MAX_RACED, Constraint
  from ckptbench.engine._choices import DECIDE_ON
  from ckptbench.engine._settings import RunSettings
  from ckptbench.engine._plan_view import describe_plan
  from ckptbench.engine._sizes import format_bytes
  from ckptbench.engine._devices import set_xla_flags
  from ckptbench.engine.scaling._scale import ScaleSettings, scale
  from ckptbench.engine.scaling._store import measured_latency, store_profile
  from ckptbench.engine._noise import pause_while_starting

__getattr__, __dir__ = lazy_face(globals())
