"""Checkpoints in OUT: removed after each run unless kept, so a sweep needs room for its largest one only;
a suite whose checkpoints cannot fit on the disk is refused before any data is built."""

from __future__ import annotations

import os
import pathlib
import textwrap
import threading
import time

import pytest

import ckptbench
from ckptbench.config import load_suite_text
from ckptbench.errors import CkptbenchError
from ckptbench.engine.loop._runner import run_suite
from ckptbench.engine._settings import RunSettings

pytestmark = pytest.mark.host_memory("inline", reason=(
    "these tests bound the disk the timed runs' checkpoints take in OUT; the memory pass writes "
    "checkpoints of its own"
))

SWEEP = """\
    suite_name: disk
    num_repeats: 2
    checkpoint_config:
      spec: {w: {dtype: float32, shape: [256, 1024], sharding: [x]}}
      fill: random_bits
    mesh_config: {mesh_axes: [x], ici_parallelism: {x: 8}}
    benchmarks:
      - generator: save_restore
        options: {use_ocdbt: [true, false], async_enabled: false}
    """


def _size(root: pathlib.Path) -> int:
  total = 0
  for dirpath, _, files in os.walk(root):
    for name in files:
      try:
        total += os.lstat(os.path.join(dirpath, name)).st_size
      except FileNotFoundError:  # removed while we walked
        pass
  return total


class _Sampler:
  """OUT's size every few milliseconds while a run lasts (real files, measured as they come and go)."""

  def __init__(self, root: pathlib.Path):
    self.root, self.peak, self._stop = root, 0, threading.Event()
    self._thread = threading.Thread(target=self._loop, daemon=True)

  def _loop(self) -> None:
    while not self._stop.is_set():
      self.peak = max(self.peak, _size(self.root))
      time.sleep(0.002)

  def __enter__(self):
    self._thread.start()
    return self

  def __exit__(self, *exc):
    self._stop.set()
    self._thread.join()


def _run(tmp_path: pathlib.Path, text: str):
  # No storage probe: it writes its own (temporary) file of 256 MiB in OUT, which is not a checkpoint.
  suite = load_suite_text(textwrap.dedent(text), str(tmp_path / "s.yaml"))
  return run_suite(suite, RunSettings(output_dir=tmp_path / "out", show_progress=False, probe_storage=False))


def _results_bytes(out: pathlib.Path) -> int:
  return sum(f.stat().st_size for f in out.iterdir() if f.is_file())


@pytest.mark.slow
def test_a_sweeps_out_stays_under_its_largest_checkpoint_plus_the_results(tmp_path):
  out = tmp_path / "out"
  with _Sampler(out) as sampler:
    outcome = _run(tmp_path, SWEEP)
  runs = [*ckptbench.warmup_runs(outcome.records), *ckptbench.timed_runs(outcome.records)]
  assert outcome.exit_code == 0 and len(runs) == 6  # 2 variants x (1 warm-up + 2 repeats)
  largest = max(r.inventory["total_bytes"] for r in runs)
  assert largest >= 1 << 20  # incompressible 1 MiB
  bound = largest + _results_bytes(out) + 64 * 1024  # Orbax's temporary names and metadata while it commits
  assert sampler.peak <= bound, (sampler.peak, largest)
  assert _size(out) == _results_bytes(out)  # every run's checkpoint removed, and its directory
  assert not any(p.is_dir() for p in out.iterdir())

  kept = tmp_path / "kept"
  kept.mkdir()
  outcome = _run(kept, "    keep_checkpoints: true\n" + SWEEP)
  assert outcome.exit_code == 0
  checkpoints = sum(r.inventory["total_bytes"] for r in [*ckptbench.warmup_runs(outcome.records), *ckptbench.timed_runs(outcome.records)])
  assert _size(kept / "out") >= checkpoints >= 6 * largest * 0.9  # every one stays, as asked


def test_a_suite_whose_checkpoints_cannot_fit_on_the_disk_is_refused_before_anything_is_written(tmp_path):
  # 1 PiB of float32 data: more than any disk has free (and the memory check, which would refuse it first, is off).
  suite = load_suite_text(textwrap.dedent(SWEEP).replace("[256, 1024]", "[33554432, 8388608]"), str(tmp_path / "s.yaml"))
  settings = RunSettings(output_dir=tmp_path / "out", show_progress=False, check_memory=False)
  with pytest.raises(CkptbenchError) as e:
    run_suite(suite, settings)
  message = str(e.value)
  assert "the checkpoints need about" in message and "free" in message and "RunSettings(check_disk=False)" in message
  assert not (tmp_path / "out").exists()


def test_keeping_checkpoints_and_removing_each_runs_directory_contradict(tmp_path):
  suite = load_suite_text("suite_name: s\nkeep_checkpoints: true\nbenchmarks: [{generator: save_restore}]\n",
                          str(tmp_path / "s.yaml"))  # fmt: skip
  with pytest.raises(CkptbenchError, match="RunSettings.remove_repeated_dir=True. removes each run.s directory but .*s.yaml: keep_checkpoints: true keeps it; give one"):
    run_suite(suite, RunSettings(output_dir=tmp_path / "out", remove_repeated_dir=True, show_progress=False))


def test_the_last_runs_checkpoint_is_gone_when_run_returns_though_it_is_removed_while_the_views_are_written(tmp_path):
  import ckptbench  # noqa: PLC0415

  (tmp_path / "s.yaml").write_text(textwrap.dedent(SWEEP).replace("num_repeats: 2", "num_repeats: 1"))
  out = tmp_path / "out"
  outcome = ckptbench.run(tmp_path / "s.yaml", ckptbench.RunSettings(output_dir=out, show_progress=False,
                                                                    probe_storage=False))  # fmt: skip
  assert outcome.exit_code == 0 and (out / "report.html").is_file()
  assert not any(p.is_dir() and p.name != "tensorboard" for p in out.iterdir()), sorted(out.iterdir())
