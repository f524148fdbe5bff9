"""Statistics and aggregation: pure functions over numbers and records (no I/O, no JAX).

Names load on first use: the command line reads the default thresholds without numpy.
"""

from typing import TYPE_CHECKING

from ckptbench._lazy import lazy_face

if TYPE_CHECKING:  # the face, each name once: lazy_face reads it, type checkers and IDEs resolve it
  from ckptbench.stats._scaling import (
      LAWS,
      LAW_POINTS,
      TooFewHostCounts,
      check_refusal,
      too_few_counts,
      Check,
      Fit,
      Prediction,
      check_largest,
      first_crossing,
      predict,
      select_law,
  )
  from ckptbench.stats._store_model import (
      PROFILES,
      BenchmarkModel,
      StoreProfile,
      StoreTime,
      model_benchmark,
      store_time,
  )
  from ckptbench.stats._defaults import AUTO_LOOKS, DEFAULT_ALPHA, DEFAULT_THRESHOLD, MIN_READINGS
  from ckptbench.stats._compare import (
      CONFIDENCE_LEVEL,
      MetricComparison,
      Verdict,
      compare_samples,
      median_ratio,
      per_repeat_across_hosts,
  )
  from ckptbench.stats._change_points import SCAN_ALPHA, ChangePoint, change_points, level_changes
  from ckptbench.stats._runs import run_levels
  from ckptbench.stats._arrival import ARRIVAL_ALPHA, GROUP_ALPHAS, GROUPS, MIN_REFERENCE_RUNS, PENDING_RUNS, Arrivals, ArrivalTest, arrival_tests
  from ckptbench.stats._goodput import (
      CheckpointCost,
      expected_goodput,
      optimal_interval,
      simulate_goodput,
      young_interval,
  )
  from ckptbench.stats._decide import AUTO_SPENDING, Decision, Design, Spending, decide
  from ckptbench.stats._cell_model import Factor, Observation
  from ckptbench.stats._effects import Conditional, FactorialFit, Rates, Term, factor_effects, holm_levels
  from ckptbench.stats._race import (
      ANSWER_ROUNDS,
      RACE_LOOKS,
      RACE_SPENDING,
      MeanInterval,
      PairedRatio,
      RaceLook,
      RaceRule,
      Standing,
      mean_interval,
      paired_ratio,
      reference_settled,
      past_limit,
      race_look,
  )
  from ckptbench.stats._settled import decide_settled, figure_error, readings_settled, settled_rule
  from ckptbench.stats._direction import Direction, absolute_floor, metric_direction
  from ckptbench.stats._interval import MedianInterval, median_interval, ratio_interval
  from ckptbench.stats._trend import Slope, theil_sen_slope
  from ckptbench.stats._summary import describe, metric_samples, metric_statistics, summarize_benchmarks
  from ckptbench.stats._hosts import host_statistics
  from ckptbench.stats._outliers import modified_z_scores, outlier_indices

__getattr__, __dir__ = lazy_face(globals())
