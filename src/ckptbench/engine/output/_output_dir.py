"""OUT before a run: created, writable, and not mixing with earlier results by accident."""

from __future__ import annotations

from ckptbench.errors import CkptbenchError
from ckptbench.results import RESULTS_FILE
from ckptbench.results import MANIFEST_FILE, SUMMARY_FILE
from ckptbench.engine._settings import RunSettings

_OUTPUT_FILES = (RESULTS_FILE, SUMMARY_FILE, MANIFEST_FILE)


def prepare_output_dir(settings: RunSettings) -> None:
  """Creates OUT, refusing to mix with earlier results unless resuming or overwriting."""
  out = settings.output_dir
  if out.exists() and not out.is_dir():
    raise CkptbenchError(f"output directory {out} exists and is not a directory")
  existing = [name for name in _OUTPUT_FILES if (out / name).exists()]
  if existing and not (settings.resume or settings.overwrite):
    raise CkptbenchError(
        f"output directory {out} already holds results ({', '.join(existing)}); pass"
        f" {settings.ask('resume')} to complete them, {settings.ask('overwrite')} to replace them, or choose"
        " another directory"
    )
  try:
    out.mkdir(parents=True, exist_ok=True)
    probe = out / ".ckptbench-write-test"
    probe.write_bytes(b"")
    probe.unlink()
  except OSError as e:
    raise CkptbenchError(f"output directory {out} cannot be written: {e.strerror or e}") from None
  if settings.overwrite and not settings.resume:
    for name in _OUTPUT_FILES:
      (out / name).unlink(missing_ok=True)
