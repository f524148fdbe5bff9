"""The one user-facing error type and its exit codes.

The CLI prints a `CkptbenchError` as a single line (no traceback) and exits with
its `exit_code`. Everything else that escapes is a bug in ckptbench.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_BENCHMARK_FAILED = 1
EXIT_USAGE = 2
EXIT_REGRESSION = 3
EXIT_RUN_STUCK = 4  # a multi-process run passed its limit, likely stuck in a collective (engine/_watchdog.py)
EXIT_INCONCLUSIVE = 5  # --fail_on_regression and a headline metric neither worse nor shown equivalent
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


class CkptbenchError(Exception):
  """An error the user can fix; printed as one line by the CLI."""

  exit_code: int = EXIT_USAGE


class ConfigError(CkptbenchError):
  """A problem in a suite file, located by file, line and key path."""

  def __init__(
      self,
      message: str,
      *,
      file: str | None = None,
      line: int | None = None,
      key: str | None = None,
  ):
    self.message = message
    self.file = file
    self.line = line
    self.key = key
    super().__init__(self._format())

  def _format(self) -> str:
    where = ""
    if self.file:
      where = self.file + (f":{self.line}" if self.line else "")
    parts = [p for p in (where, f"key '{self.key}'" if self.key else "") if p]
    prefix = ": ".join(parts)
    return f"{prefix}: {self.message}" if prefix else self.message
