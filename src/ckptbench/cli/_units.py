"""Values with units on the command line: durations (`90s`, `5m`, `6h`) and sizes (`512MiB`, `8GiB`).

A flag's name says what it is and its value carries the unit (hyperfine's and Go's habit), so a
bare number is read in the unit the flag's older name carried (`--time_budget 120` is seconds,
`--size 256` MiB as `--size_mib 256` was).
"""

from __future__ import annotations

import argparse
import re
from typing import Callable

_SECONDS = {"s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
_BYTES = {
    "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
}  # fmt: skip
_NUMBER_UNIT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_duration(text: str) -> float:
  """Seconds of '90', '90s', '30m', '6h' or '1.5d' (a bare number is seconds).

  Example:
    >>> parse_duration("1.5h")
    5400.0
  """
  match = _NUMBER_UNIT.match(text)
  unit = match.group(2).lower() if match else ""
  if not match or unit not in ("", *_SECONDS) or not float(match.group(1)) > 0:
    raise argparse.ArgumentTypeError(f"expected a positive duration such as 90s, 5m, 6h or 2d, got {text!r}")
  return float(match.group(1)) * _SECONDS[unit or "s"]


def size_in(bare_unit: str) -> Callable[[str], float]:
  """A parser of sizes ('512MiB', '8GiB', '1.5GB') giving bytes; a bare number is in `bare_unit`.

  Example:
    >>> size_in("MiB")("1GiB") == size_in("MiB")("1024")
    True
  """

  def parse_size(text: str) -> float:
    match = _NUMBER_UNIT.match(text)
    unit = (match.group(2) if match else "").lower()
    if not match or unit not in ("", *_BYTES) or not float(match.group(1)) > 0:
      raise argparse.ArgumentTypeError(
          f"expected a positive size such as 512MiB or 8GiB (a bare number is {bare_unit}), got {text!r}"
      )
    return float(match.group(1)) * _BYTES[unit or bare_unit.lower()]

  return parse_size
