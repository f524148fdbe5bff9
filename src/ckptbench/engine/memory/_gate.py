"""Two pipes between a run and its memory pass, so that the pass's start and warm-ups run beside the
run's own start and warm-ups, and nothing of either runs beside the other's measured runs.

The pass starts as the run's first run does. Once its warm-ups are done (their checkpoints removed) it
says so on one pipe and waits on the other; the run waits for that word before its first timed run, and
sends its own once its timed runs are done and their last checkpoint is gone. Warm-ups are never read:
a process's first allocations, compilations and caches are what they are for, and the run's timings
and the pass's readings each come after. A pass that is never sent the word (the run was stopped or
failed) reads end-of-file and exits without a reading. Once its readings are in its results.jsonl and
their last checkpoint is gone, the pass says so on the first pipe: the run reads them then, and stops
the pass, whose own summary and tables nobody reads.
"""

from __future__ import annotations

import os
import time

from ckptbench.errors import EXIT_INTERRUPTED

_WARM, _GO, _DONE = b"w", b"g", b"d"


class PassGate:
  """The run's end of the pipes. `child_fds` are the pass's ends (`--memory_pass_gate`): a forked pass
  inherits them, a fresh one gets them through `pass_fds`; `child_started` closes them here."""

  def __init__(self) -> None:
    self._warm_read, warm_write = os.pipe()
    go_read, self._go_write = os.pipe()
    self.child_fds: tuple[int, ...] = (warm_write, go_read)
    self.flag = f"{warm_write},{go_read}"  # the pass's `--memory_pass_gate`
    self.waited_s = 0.0  # how long the run waited for the pass's warm-ups
    self._warmed = False

  def child_started(self) -> None:
    """Closes the pass's ends here, so that its exit reads as end-of-file on ours."""
    for fd in self.child_fds:
      os.close(fd)
    self.child_fds = ()

  def wait_warm(self) -> None:
    """Returns once the pass's warm-ups are done, or the pass is gone (nothing more of it runs beside the run)."""
    if self._warm_read < 0 or self._warmed:
      return
    started = time.perf_counter()
    self._warmed = os.read(self._warm_read, 1) == _WARM  # b"" where the pass exited
    self.waited_s += time.perf_counter() - started

  def release(self) -> None:
    """Lets the pass read: the timed runs are done."""
    try:
      os.write(self._go_write, _GO)
    except BrokenPipeError:  # the pass exited already; waiting for it says how
      pass
    os.close(self._go_write)
    self._go_write = -1

  def wait_done(self) -> bool:
    """Whether the pass said its readings are written and their checkpoints gone (else it exited without)."""
    word = None
    while self._warm_read >= 0 and word not in (_DONE, b""):  # a pass never waited for says b"w" first
      word = os.read(self._warm_read, 1)
    self.close()
    return word == _DONE

  def close(self) -> None:
    """Closes every end left here: a pass still waiting exits without a reading."""
    self.close_run_ends()
    self.child_started()

  def close_run_ends(self) -> None:
    """Closes the run's ends: here at the end, and in a forked pass, which keeps only its own."""
    for fd in (self._warm_read, self._go_write):
      if fd >= 0:
        os.close(fd)
    self._warm_read = self._go_write = -1


class PassEnd:
  """The pass's ends of the pipes (its `--memory_pass_gate`)."""

  def __init__(self, fds: tuple[int, int]) -> None:
    self._warm_write, self._go_read = fds

  def at_gate(self) -> None:
    """After the pass's warm-ups: says so, then waits until the run's timed runs are done.

    Raises:
      SystemExit: the run ended without sending the word (stopped, or failed): the pass reads nothing.
    """
    self._say(_WARM)
    word = os.read(self._go_read, 1)
    os.close(self._go_read)
    if word != _GO:
      raise SystemExit(EXIT_INTERRUPTED)

  def done(self) -> None:
    """Says that the pass's readings are written and their last checkpoint is gone."""
    self._say(_DONE)
    os.close(self._warm_write)

  def _say(self, word: bytes) -> None:
    try:
      os.write(self._warm_write, word)
    except BrokenPipeError:  # the run reads no more: it has ended, and the pass's exit is what it waits for
      pass
