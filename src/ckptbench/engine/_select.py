"""`-k PATTERN`: run only the benchmarks whose name or key matches."""

from __future__ import annotations

import dataclasses
import fnmatch
from typing import Sequence

from ckptbench.errors import CkptbenchError
from ckptbench.engine._sweep import Plan, PlannedBenchmark


def matches(bench: PlannedBenchmark, pattern: str) -> bool:
  """A glob (`*ocdbt=False*`) matches the whole name; other text is a substring of the name, or a key prefix.

  Example: `-k use_ocdbt=True` picks `SaveRestoreBenchmark(use_ocdbt=True, ...)`.
  """
  if any(c in pattern for c in "*?["):
    return fnmatch.fnmatchcase(bench.name, pattern)
  return pattern in bench.name or bench.key.startswith(pattern)


def select(plan: Plan, patterns: Sequence[str]) -> Plan:
  """The plan cut to the benchmarks matching any of `patterns` (all of them without patterns).

  Raises:
    CkptbenchError: when no benchmark matches, listing the names there are.
  """
  if not patterns:
    return plan
  kept = tuple(b for b in plan.benchmarks if any(matches(b, p) for p in patterns))
  if not kept:
    names = ", ".join(b.name for b in plan.benchmarks)
    raise CkptbenchError(f"-k {' -k '.join(patterns)} matches no benchmark; the suite has: {names}")
  return dataclasses.replace(plan, benchmarks=kept)
