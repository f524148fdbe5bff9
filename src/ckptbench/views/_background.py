"""Writing the views (HTML report, TensorBoard) in a detached process, off the run's critical path.

The results are durable before this starts (results.jsonl fsynced run by run,
summary.json and manifest.json written atomically), so the views are only a
rendering of files already on disk. `ckptbench run` starts one child process
as its last act and returns; the child waits until the run's process has
exited (so a baseline comparison written at the very end is in the report),
then writes OUT/report.html and OUT/tensorboard/ and logs to OUT/views.log.
When no storage probe was cached, the run does not measure one (three probes
of 256 MiB take seconds); the child measures it first, records it in
manifest.json (`roofline`, with `roofline_measured_after_run: true`) and
caches it, so the report has its lines and the next run its shares.

The child waits on a pipe: the parent holds the write end and never writes,
so the child's read returns end-of-file exactly when the parent has exited,
however it exits. Nothing is inherited from the parent's terminal, so a caller
capturing the run's output (CI, `subprocess.run`) is not held up by it either.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import subprocess
import sys

from ckptbench.errors import CkptbenchError
from ckptbench.results import MANIFEST_FILE
from ckptbench.results import read_document, write_json_atomic
from ckptbench.views._views import view_sources

VIEWS_LOG = "views.log"
VIEWS_DONE = "views written"

# The write end of each child's pipe, held for the life of this process.
_held: list[int] = []


def start_views(out_dir: str | os.PathLike, probe: bool = True) -> subprocess.Popen:
  """Starts `ckptbench report OUT` detached, to run once this process has exited.

  The child writes the registered default views; views registered by user
  code here are registered there too (their files are passed with --views_from).

  Args:
    out_dir: the run's output directory.
    probe: measure the storage probe first when the run had none.

  Returns:
    The child process (not to be waited for: it waits for us).
  """
  out = pathlib.Path(out_dir)
  read_end, write_end = os.pipe()
  log = open(out / VIEWS_LOG, "wb")  # noqa: SIM115  (handed to the child)
  try:
    child = subprocess.Popen(
        [sys.executable, "-m", "ckptbench", "report", str(out), f"--after_parent_fd={read_end}"]
        + [f"--views_from={source}" for source in view_sources()]
        + (["--probe_missing"] if probe else []),
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        pass_fds=(read_end,), start_new_session=True,
    )  # fmt: skip
  finally:
    os.close(read_end)
    log.close()
  _held.append(write_end)
  return child


def wait_for_parent(fd: int) -> None:
  """Blocks until the process holding the other end of pipe `fd` has exited."""
  with os.fdopen(fd, "rb") as pipe:
    pipe.read()


def add_missing_probe(out_dir: str | os.PathLike) -> None:
  """Measures the storage probe into OUT/manifest.json when the run left it out (see the module docstring)."""
  from ckptbench.metrics import probe_storage  # noqa: PLC0415  (only the child measures)

  out = pathlib.Path(out_dir)
  path = out / MANIFEST_FILE
  manifest = read_document(path)
  if not isinstance(manifest, dict) or manifest.get("roofline") is not None:
    return
  try:
    manifest["roofline"] = dataclasses.asdict(probe_storage(out))
  except (OSError, CkptbenchError) as e:  # the views are still worth writing
    print(f"storage probe failed ({e}); the report has no roofline lines", flush=True)
    return
  manifest["roofline_measured_after_run"] = True
  write_json_atomic(path, manifest)

