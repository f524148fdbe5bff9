"""Ctrl-C during a run: the first finishes the current run, the second stops at once."""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Iterator


class StopRequest:
  """First Ctrl-C: finish the current run, then stop. Second Ctrl-C: stop now."""

  def __init__(self):
    self.requested = False

  @contextlib.contextmanager
  def installed(self) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
      yield
      return
    previous = signal.getsignal(signal.SIGINT)

    def handle(signum, frame):
      if self.requested:
        signal.signal(signal.SIGINT, previous)
        raise KeyboardInterrupt
      self.requested = True
      print("\nckptbench: stopping after the current run (Ctrl-C again to abort)", flush=True)

    signal.signal(signal.SIGINT, handle)
    try:
      yield
    finally:
      signal.signal(signal.SIGINT, previous)
