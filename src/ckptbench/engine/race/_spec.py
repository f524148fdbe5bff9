"""What `ckptbench tune` races for: the objective, the constraints, and how many candidates a race takes."""

from __future__ import annotations

import dataclasses
import re

from ckptbench.errors import CkptbenchError

# A grid larger than this is sampled (with Optuna) instead of raced whole.
MAX_RACED = 64

_CONSTRAINT = re.compile(r"^\s*(?P<tag>[^\s<>=]+)\s*(?P<op><=|>=)\s*(?P<limit>\S+)\s*$")


@dataclasses.dataclass(frozen=True)
class Constraint:
  """`TAG <= LIMIT` (or `>=`): a candidate whose tag's interval lies wholly past the limit is dropped."""

  tag: str
  at_most: bool
  limit: float

  @classmethod
  def parse(cls, text: str) -> Constraint:
    """Reads `'TAG <= VALUE'` or `'TAG >= VALUE'`, VALUE in the tag's unit.

    Raises:
      CkptbenchError: anything else, named.

    Example:
      >>> Constraint.parse("save_7_memory/host_rss_peak_diff_mib <= 1536")
      Constraint(tag='save_7_memory/host_rss_peak_diff_mib', at_most=True, limit=1536.0)
    """
    match = _CONSTRAINT.match(text)
    try:
      limit = float(match["limit"]) if match else None
    except ValueError:
      limit = None
    if match is None or limit is None:
      raise CkptbenchError(f"--constraint {text!r}: expected 'TAG <= VALUE' or 'TAG >= VALUE', VALUE a number in"
                           " the tag's unit, e.g. 'save_7_memory/host_rss_peak_diff_mib <= 1536'")  # fmt: skip
    return cls(match["tag"], match["op"] == "<=", limit)

  def __str__(self) -> str:
    return f"{self.tag} {'<=' if self.at_most else '>='} {self.limit:g}"


@dataclasses.dataclass(frozen=True)
class Race:
  """A race of a suite's grid (engine/race/_race.py).

  Attributes:
    objective: the tag to make best (its direction decides which way: a time lower, a throughput higher).
    constraints: limits a candidate must keep.
    max_candidates: a grid with more cells is sampled down to this many (Optuna).
    seed: the sampler's seed (None: a fresh one, recorded in tune.json).
  """

  objective: str
  constraints: tuple[Constraint, ...] = ()
  max_candidates: int = MAX_RACED
  seed: int | None = None

  @property
  def tags(self) -> tuple[str, ...]:
    return (self.objective, *(c.tag for c in self.constraints))
