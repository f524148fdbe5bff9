"""`ckptbench.run`: the one entry point behind `ckptbench run`.

The story of a run: the process is prepared (simulated devices, HLO dump,
jax.distributed, x64) before JAX starts; the suite is loaded and its
baselines checked; the runner runs every benchmark x repeat, appending each
record to results.jsonl as it ends, then writes summary.json; on process 0 the
run is captured as a baseline and/or compared with one (comparison.json); last
the views (TensorBoard, HTML report) are written once, with the comparison in
them: here, or (`views_in_background`, as `ckptbench run` does) by a detached
process that starts once this one has exited, so the run does not wait for them. The CLI maps its flags to `RunSettings` and prints; nothing else.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pathlib
from typing import TYPE_CHECKING

from ckptbench.config import Suite, load_suite, read_simdevice
from ckptbench.data import ensure_fixture
from ckptbench.distributed import Coordinator, check_colocated_python_supported, make_coordinator
from ckptbench.errors import EXIT_OK, CkptbenchError
from ckptbench.views import write_views
from ckptbench.views import start_views
from ckptbench.results import output_lock
from ckptbench.storage import upload_directory
from ckptbench.engine._baselines import capture_and_compare, check_baseline_exists
from ckptbench.engine._process import prepare_process
from ckptbench.engine.memory._pass import check_host_memory, forked_memory_pass
from ckptbench.engine._library_output import LibraryOutput, library_output_captured
from ckptbench.engine._link import shaped_link, write_link_summary
from ckptbench.engine.output._locations import check_store_targets
from ckptbench.engine.output._disk import Freeing
from ckptbench.engine.loop._runner import SuiteOutcome, run_suite
from ckptbench.engine._settings import RunSettings
from ckptbench.engine._simdevice import check_cluster_before_start, check_cluster_started

if TYPE_CHECKING:
  from ckptbench.results import Comparison


@dataclasses.dataclass(frozen=True)
class RunOutcome(SuiteOutcome):
  """What `ckptbench.run` produced, and the exit code `ckptbench run` returns for it."""

  is_writer: bool = True  # process 0, which wrote OUT and holds every host's records
  comparison: Comparison | None = None
  captured_baseline: pathlib.Path | None = None
  fail_on_regression: bool = False
  allow_inconclusive: bool = False
  link: dict | None = None  # the shaped link's shape and counters (OUT/link.json)
  uploaded_to: str | None = None  # the store URL the results were copied to (`-o gs://...`)
  uploaded_files: int = 0
  library_log: pathlib.Path | None = None  # OUT/logs/process_<i>.log, when the libraries' output was captured
  library_log_lines: int = 0

  @property
  def exit_code(self) -> int:
    """130 interrupted, 1 a failed benchmark; when asked to fail on a regression, 3 for a headline
    metric worse than the baseline and 5 for one inconclusive (unless allowed); else 0."""
    suite_code = super().exit_code
    if suite_code != EXIT_OK or self.comparison is None:
      return suite_code  # a failed benchmark (1) wins over a regression (3)
    return self.comparison.exit_code(self.fail_on_regression, self.allow_inconclusive)


def run(suite: Suite | str | os.PathLike, settings: RunSettings) -> RunOutcome:
  """Runs a suite as `ckptbench run` does; results land in `settings.output_dir`.

  Args:
    suite: a suite file's path, or a `Suite` from `load_suite`. Its meshes
      decide how many CPU devices to simulate: JAX is set up once they are
      read, before the generators are imported (a `Suite` loaded already must
      not have started JAX's backend).
    settings: the run's settings (the `ckptbench run` flags).

  Every run is measured with Python's cyclic garbage collector on, as a
  training process has it, even where the caller paused it (`ckptbench run`
  pauses it while it starts); its state is put back once the runs end.

  Returns:
    The outcome; `outcome.exit_code` is what the CLI exits with.

  Raises:
    CkptbenchError: bad input (a suite file, a missing baseline, a runtime
      that cannot start), before any benchmark runs.

  Example:
    >>> outcome = ckptbench.run("examples/quickstart.yaml", ckptbench.RunSettings(output_dir="out"))
    >>> outcome.exit_code
    0
  """
  with library_output_captured(settings.capture_library_output and not settings.verbose) as captured:
    return _run(suite, settings, captured)


def _run(suite: Suite | str | os.PathLike, settings: RunSettings, captured: LibraryOutput | None) -> RunOutcome:
  """`run`, with what native libraries print captured (or not)."""
  if isinstance(suite, Suite):
    if settings.overrides:  # they edit a suite's text before validation; a loaded Suite has none left
      raise CkptbenchError(
          f"overrides {list(settings.overrides)} apply to a suite file, and this suite is loaded already:"
          " pass them to load_suite(path, overrides) or load_suite_text(text, overrides=...) instead")
    check_cluster_before_start(suite.config.simdevice, settings.devices)
    prepare_process(settings, suite.devices_needed)
  else:  # JAX set up once the meshes are known, before options classes (which may ask JAX) are checked
    check_cluster_before_start(read_simdevice(suite, settings.overrides), settings.devices)
    suite = load_suite(suite, settings.overrides, before_generators=lambda devices: prepare_process(settings, devices))
  with forked_memory_pass(suite, settings):  # before JAX's backend starts
    check_cluster_started(suite.config.simdevice)
    settings = _checked_targets(suite, settings)
    coordinator = make_coordinator()
    ensure_fixture(suite, coordinator.process_count, say=lambda line: print(line, flush=True))
    check_host_memory(suite, settings, coordinator.process_count)
    with output_lock(settings.output_dir, "run") if coordinator.process_index == 0 else contextlib.nullcontext():
      if captured is not None:  # OUT is this run's now (process 0 holds its lock)
        captured.keep_in(settings.output_dir, coordinator.process_index)
      outcome = _run_and_write(suite, settings, coordinator)
  if captured is None:
    return outcome
  return dataclasses.replace(outcome, library_log=captured.path, library_log_lines=captured.lines())


def _run_and_write(suite: Suite, settings: RunSettings, coordinator: Coordinator) -> RunOutcome:
  """The runner, then (process 0) the baseline, the views and the upload."""
  is_writer = coordinator.process_index == 0
  with Freeing() as freeing:  # the last run's checkpoint is removed while the views are written
    with shaped_link(settings.link, settings.checkpoint_root) as link:
      outcome = run_suite(suite, settings, coordinator, link_stats=link.stats if link else None, freeing=freeing)
      if link:  # the removal's requests cross the link: done before it closes, and counted
        freeing.wait()
      link_summary = write_link_summary(link, outcome.output_dir) if link and is_writer else None
    captured = comparison = None
    if is_writer and not outcome.interrupted:
      captured, comparison = capture_and_compare(
          outcome.output_dir,
          capture_path=settings.baseline_capture_path,
          label=settings.baseline_label,
          baseline_path=settings.baseline_path,
          threshold=settings.regression_threshold,
      )
    if is_writer and settings.write_views:
      _write_views(outcome.output_dir, settings)
    freeing.wait()  # an upload carries OUT without the checkpoints
    uploaded = upload_directory(outcome.output_dir, settings.output_url) if is_writer and settings.output_url else 0
  return RunOutcome(
      **{f.name: getattr(outcome, f.name) for f in dataclasses.fields(outcome)},
      is_writer=is_writer,
      comparison=comparison,
      captured_baseline=captured,
      fail_on_regression=settings.fail_on_regression,
      allow_inconclusive=settings.allow_inconclusive,
      link=link_summary,
      uploaded_to=settings.output_url,
      uploaded_files=uploaded,
  )


def _checked_targets(suite: Suite, settings: RunSettings) -> RunSettings:
  """The settings with the suite's checkpoint root, baseline and capture paths filled in (the flag's, else
  the suite's: decided here once, the run plan and the comparison read them), once all are usable.

  Raises:
    CkptbenchError: a store target that cannot be used, a missing baseline, or
      colocated Python asked for where it is not supported.
  """
  baseline_path = settings.baseline_path or suite.config.baseline_path
  capture_path = settings.baseline_capture_path or suite.config.baseline_capture_path
  checkpoint_root = settings.checkpoint_root or suite.config.checkpoint_root or settings.output_url
  settings = dataclasses.replace(
      settings, checkpoint_root=checkpoint_root, baseline_path=baseline_path, baseline_capture_path=capture_path)
  check_store_targets(
      suite, settings.checkpoint_root, baseline_path=baseline_path, baseline_capture_path=capture_path,
      output=settings.output_url,
  )  # fmt: skip
  check_baseline_exists(baseline_path)
  if any(c.config.load_with_colocated_python for c in suite.checkpoints):
    check_colocated_python_supported()
  return settings


def _write_views(out_dir: pathlib.Path, settings: RunSettings) -> None:
  """The registered views: in a detached process after this one exits, or here (an upload must carry them)."""
  if settings.views_in_background and not settings.output_url:
    start_views(out_dir, probe=settings.probe_storage)  # waits for this process to exit
  else:
    write_views(out_dir)
