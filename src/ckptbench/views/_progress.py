"""Progress over runs: one line on a terminal, a line per look when piped.

On a terminal a rich bar holds everything on one line that it rewrites: the run in progress, the
runs done, the time, and the last note (a look at the data, the memory pass); only a failed run
prints a line of its own. Piped (CI, a log) interleaved rounds (every benchmark once a round, and
the warm-ups) are summed up in a line before each note (a look at the data: `rounds 1-6: 2
benchmarks ok`, then what the look found) and at the end, or after `_ROUNDS_QUIET_S` seconds without
a line; benchmarks run back to back get a line each (at least every `_QUIET_S` seconds, so a log of
one long benchmark still moves). A failed run gets its own line as it ends.
"""

from __future__ import annotations

import dataclasses
import sys
import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ckptbench._escape import terminal_text


_QUIET_S = 10.0
_ROUNDS_QUIET_S = 30.0


@dataclasses.dataclass(frozen=True)
class _Done:
  benchmark: str
  repeat: int
  warmup: bool
  seconds: float
  failed: bool
  done: int  # runs done with this one


class RunProgress:
  """Reports each finished run. Silent when `enabled` is False (non-zero processes)."""

  def __init__(self, total: int, *, enabled: bool = True, terminal: bool | None = None):
    self._enabled = enabled
    self._total = total
    self._done = 0
    self._terminal = sys.stdout.isatty() if terminal is None else terminal
    self._bar: Progress | None = None
    self._round: list[_Done] = []  # piped: the runs of the round not yet written
    self._round_started = 0.0
    self._rounds: list[list[_Done]] = []  # piped: interleaved rounds finished and not yet written
    self._last_line = time.monotonic()
    if enabled and self._terminal:
      self._bar = Progress(
          TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
          TextColumn("{task.fields[note]}", markup=False), console=Console(), transient=True,
      )  # fmt: skip
      self._task = self._bar.add_task("runs", total=total, note="")
      self._bar.start()

  def started(self, benchmark: str, repeat: int, warmup: bool) -> None:
    if self._bar is not None:
      self._bar.update(self._task, description=_label(benchmark, repeat, warmup)[:60])

  def finished(self, benchmark: str, repeat: int, warmup: bool, seconds: float, error: str | None) -> None:
    self._done += 1
    if not self._enabled:
      return
    if error is not None:
      line = f"[{self._done}/{self._total}] {_label(benchmark, repeat, warmup)}: FAILED: {error} ({seconds:.2f} s)"
      self._print(line)
    if self._bar is not None:
      self._bar.advance(self._task)
      return
    run = _Done(benchmark, repeat, warmup, seconds, error is not None, self._done)
    if self._round and not _same_round(self._round, run):
      self._write_round()
    if not self._round:
      self._round_started = time.monotonic()
    self._round.append(run)
    one_benchmark = len({r.benchmark for r in self._round}) == 1
    if one_benchmark and time.monotonic() - self._round_started >= _QUIET_S:
      self._write_round(back_to_back=True)

  def note(self, line: str) -> None:
    """A line between runs, e.g. what a look at the data found (on a terminal: the bar's last note)."""
    if not self._enabled:
      return
    line = terminal_text(line)
    if self._bar is not None:
      self._bar.update(self._task, note=line[:100])
      return
    self._write_round()
    self._write_rounds()
    self._say(line)

  def close(self) -> None:
    if self._bar is not None:
      self._bar.stop()
    elif self._enabled:
      self._write_round()
      self._write_rounds()

  def _print(self, line: str) -> None:
    line = terminal_text(line)
    if self._bar is not None:
      self._bar.console.print(line, markup=False, highlight=False)
    else:
      self._say(line)

  def _say(self, line: str) -> None:
    print(line, flush=True)
    self._last_line = time.monotonic()

  def _write_round(self, back_to_back: bool = False) -> None:
    """Writes the runs of one benchmark run back to back, or keeps a finished round for the next line."""
    if not self._round:
      return
    runs, self._round = self._round, []
    if not back_to_back and (len({r.benchmark for r in runs}) > 1 or len(runs) == 1):
      self._rounds.append(runs)
      if time.monotonic() - self._last_line >= _ROUNDS_QUIET_S:
        self._write_rounds()
      return
    self._write_rounds()
    self._say(terminal_text(f"[{runs[-1].done}/{self._total}] {runs[0].benchmark}: {_repeats_text(runs)}:"
                            f" {_status(runs)}"))  # fmt: skip

  def _write_rounds(self) -> None:
    """A line for the warm-up round and one for the timed rounds kept since the last line."""
    rounds, self._rounds = self._rounds, []
    for warmup in (True, False):
      kept = [r for r in rounds if r[0].warmup == warmup]
      if not kept:
        continue
      numbers = sorted({r[0].repeat + 1 for r in kept})  # a round's number counts from 1, as looks count rounds
      which = "warm-up" if warmup else f"round {numbers[0]}" if len(numbers) == 1 else f"rounds {numbers[0]}-{numbers[-1]}"
      counts = sorted({len({run.benchmark for run in r}) for r in kept})
      benchmarks = "-".join(map(str, (counts[0], counts[-1]) if len(counts) > 1 else counts))
      runs = [run for r in kept for run in r]
      status = _status(runs)
      self._say(terminal_text(f"[{runs[-1].done}/{self._total}] {which}: {benchmarks} benchmark{'' if counts == [1] else 's'}"
                              f"{' ' if status.startswith('ok') else ', '}{status}"))  # fmt: skip


def _status(runs: list[_Done]) -> str:
  """`ok (0.50-0.70 s each)`, or how many failed."""
  failed = sum(r.failed for r in runs)
  status = f"{failed} of {len(runs)} runs FAILED" if failed else "ok"
  low, high = min(r.seconds for r in runs), max(r.seconds for r in runs)
  took = f"{low:.2f} s" if low == high else f"{low:.2f}-{high:.2f} s"
  return f"{status} ({took}{' each' if len(runs) > 1 else ''})"


def _label(benchmark: str, repeat: int, warmup: bool) -> str:
  return terminal_text(f"{benchmark} {'warmup' if warmup else 'repeat'} {repeat}")


def _same_round(runs: list[_Done], run: _Done) -> bool:
  """`run` belongs with `runs`: all of one repeat (or of the warm-ups), or all of one benchmark."""
  same_repeat = all((r.repeat, r.warmup) == (run.repeat, run.warmup) and r.benchmark != run.benchmark for r in runs)
  return same_repeat or all(r.benchmark == run.benchmark for r in runs)


def _repeats_text(runs: list[_Done]) -> str:
  warmups = sum(r.warmup for r in runs)
  repeats = sorted(r.repeat for r in runs if not r.warmup)
  parts = [f"{warmups} warm-up(s)"] if warmups else []
  if repeats:
    parts.append(f"repeat {repeats[0]}" if len(repeats) == 1 else f"repeats {repeats[0]}-{repeats[-1]}")
  return " and ".join(parts)
