"""What the results mean: verdicts, baselines, comparisons with a baseline, goodput plans.

Names load lazily: the report's libraries (plotly, tensorboard, pandas) cost only when used.
"""

from typing import TYPE_CHECKING

from ckptbench._lazy import lazy_face

if TYPE_CHECKING:  # the face, each name once: lazy_face reads it, type checkers and IDEs resolve it
  from ckptbench.analysis._baseline_document import Baseline
  from ckptbench.analysis._goodput import GoodputPlan, plan_goodput
  from ckptbench.analysis._verdict import VerdictTable, build_verdict, verdict_text, judgement, median_text, ratio_text
  from ckptbench.analysis._comparison import (
      backend_refusal,
      compare_documents,
      compare_to_baseline,
      host_memory_mode,
      host_memory_refusal,
      run_design,
  )
  from ckptbench.analysis._baseline import build_baseline, capture_baseline, load_baseline, read_run, resolve_label
  from ckptbench.analysis._stability import likely_causes, stability_warnings
  from ckptbench.analysis._decisions import sweep_verdicts, undecided
  from ckptbench.analysis._effects import SweepEffects, decided_interactions, sweep_effects
  from ckptbench.analysis._floor import floor_shares
  from ckptbench.analysis._legend import (
      rules,
      rule_marks,
      console_legend,
      interval_note,
      outlier_summary,
      table_legend,
      verdict_clauses,
      outlier_lines,
  )

__getattr__, __dir__ = lazy_face(globals())
