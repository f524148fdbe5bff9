"""The model of a sweep's cells that the effects and the race stand on. Pure statistics.

The log of the metric, effect-coded factors with every interaction, and the
round as a block (the rounds interleave the cells, so what a round shared
cancels), fitted robustly (Huber's M-estimator, statsmodels' RLM). What it
yields is each measured cell's fitted mean as a row of the design, so any
contrast of cells (a main effect, an interaction, one candidate against another)
is a weighted sum of rows with its standard error from the parameters'
covariance.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Mapping, Sequence

import numpy as np


@dataclasses.dataclass(frozen=True)
class Factor:
  """One factor of a sweep: its name, its levels (as text) in sweep order, and the reference level."""

  name: str
  levels: tuple[str, ...]
  reference: str


@dataclasses.dataclass(frozen=True)
class Observation:
  """One run: the level of each factor (in the factors' order), its round, and the metric's value."""

  levels: tuple[str, ...]
  round: int
  value: float


@dataclasses.dataclass(frozen=True)
class ContrastEstimate:
  """A contrast of the cells' fitted means on the log scale, and its standard error (inf: no residual freedom)."""

  estimate: float
  error: float


@dataclasses.dataclass(frozen=True)
class CellModel:
  """A fitted model of the cells.

  Attributes:
    cell_means: each measured cell's fitted mean as its row of the design with the round's columns zeroed
      (a contrast's weights sum to 0, so any one round's part cancels), the fitted value appended.
    covariance: the parameters' covariance (all inf without residual freedom).
    residual_df: the fit's residual degrees of freedom (0: no interval).
  """

  cell_means: Mapping[tuple[str, ...], np.ndarray]
  covariance: np.ndarray
  residual_df: float

  @classmethod
  def fit(cls, factors: Sequence[Factor], observations: Sequence[Observation], *, blocks: bool) -> CellModel:
    """The effect-coded model of `observations` (positive values), with the round as a block when `blocks`.

    The fit is Huber's M-estimator (statsmodels' RLM): a shared machine's odd slow run weighs less
    than in least squares, whose spread it would inflate for every term; with normal noise it loses
    about 5% of the efficiency. Without residual freedom, least squares (no interval).
    """
    import formulaic  # noqa: PLC0415  (heavy: loaded when effects are asked for)
    import pandas as pd  # noqa: PLC0415
    import statsmodels.api as sm  # noqa: PLC0415

    names = [f"f{k}" for k in range(len(factors))]
    frame = pd.DataFrame([(*o.levels, str(o.round), math.log(o.value)) for o in observations],
                         columns=[*names, "round", "y"])  # fmt: skip
    factorial = " * ".join(f"C({n}, contr.sum)" for n in names)
    block = " + C(round, contr.sum)" if blocks and frame["round"].nunique() > 1 else ""
    matrices = formulaic.model_matrix(f"y ~ {factorial}{block}", frame)
    y, x = matrices.lhs.to_numpy().ravel(), matrices.rhs.to_numpy()
    df = float(len(y) - np.linalg.matrix_rank(x))
    with warnings.catch_warnings():  # a cell never measured makes the design rank-deficient: only contrasts of
      warnings.simplefilter("ignore", sm.tools.sm_exceptions.SingularMatrixWarning)  # measured cells are asked for
      fitted = sm.RLM(y, x, M=sm.robust.norms.HuberT()).fit() if df > 0 else sm.OLS(y, x).fit()
    parameters = np.asarray(fitted.params)
    covariance = np.asarray(fitted.cov_params()) if df > 0 else np.full((len(parameters),) * 2, np.inf)
    first = {}
    for i, o in enumerate(observations):
      first.setdefault(o.levels, i)
    rounds = np.array([c.startswith("C(round") for c in matrices.rhs.columns])
    means = {}
    for cell, i in first.items():
      row = np.where(rounds, 0.0, x[i])
      means[cell] = np.append(row, row @ parameters)
    return cls(means, covariance, df)

  def contrast(self, weights: Mapping[tuple[str, ...], float]) -> ContrastEstimate:
    """The contrast `weights` (summing to 0) of the measured cells' fitted means."""
    row = sum(w * self.cell_means[c] for c, w in weights.items())
    estimate, design_row = float(row[-1]), row[:-1]
    if not np.isfinite(self.covariance).all():  # no residual freedom: no interval
      return ContrastEstimate(estimate, math.inf)
    variance = float(design_row @ self.covariance @ design_row)
    return ContrastEstimate(estimate, math.sqrt(variance) if math.isfinite(variance) and variance >= 0 else math.inf)


def t_interval(contrast: ContrastEstimate, df: float, tail: float) -> tuple[float, float]:
  """The contrast's interval with `tail` of the t distribution beyond each end (-inf/inf: no residual freedom)."""
  from scipy import stats as distributions  # noqa: PLC0415

  if df <= 0 or not math.isfinite(contrast.error):
    return -math.inf, math.inf
  half = float(distributions.t.isf(tail, df)) * contrast.error
  return contrast.estimate - half, contrast.estimate + half


def ratio_or_none(log_value: float) -> float | None:
  """A bound on the log scale as a ratio; None where unbounded."""
  return math.exp(log_value) if math.isfinite(log_value) else None
