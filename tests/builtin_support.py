"""Helpers for the built-in benchmark tests: tiny suites run in-process, and real on-disk corruption.

Corruption goes through the public collector registry: a collector whose
`start()` damages the checkpoint files on disk just before the N-th measured
block (with the default collectors) begins, e.g. right before `load`.
"""

from __future__ import annotations

import pathlib
import shutil
import textwrap
from typing import Callable

import ckptbench
from ckptbench.config import load_suite_text
from ckptbench.engine.loop._runner import SuiteOutcome, run_suite
from ckptbench.engine._settings import RunSettings
from ckptbench.api import _collector

CORRUPTER = "test_corrupter"


def run_text(tmp_path: pathlib.Path, *parts: str, host_memory: str = "inline") -> SuiteOutcome:
  """Runs a suite given as YAML text (parts dedented one by one); results in tmp_path/out.

  One repeat and no warm-up unless the text sets them: these tests check what a
  benchmark measures, not verdicts (a sweep would otherwise repeat until decided),
  and a warm-up would take the one damage a corruption test plants.
  """
  text = "".join(textwrap.dedent(part) for part in parts)
  if "num_repeats" not in text:
    text = "num_repeats: 1\n" + text
  if "num_warmups" not in text:  # last, so that the lines errors name stay the text's own
    text = text.rstrip("\n") + "\nnum_warmups: 0\n"
  suite = load_suite_text(text, str(tmp_path / "suite.yaml"), base_dir=tmp_path)
  # Host memory inside the run: these tests check what a built-in's test_fn measures and derives, in
  # this process (a memory pass would run it again in a second one). Every built-in runs with the
  # default memory pass in tests/test_example_walk.py, and the pass itself in tests/test_memory_pass.py.
  settings = RunSettings(output_dir=tmp_path / "out", show_progress=False, host_memory=host_memory)
  return run_suite(suite, settings)


def ok_metrics(outcome: SuiteOutcome) -> list[dict]:
  """The metrics of every run, after checking that none failed."""
  errors = [r.error.message for r in outcome.records if r.failed]
  assert not errors, errors
  assert outcome.records
  return [r.metrics for r in ckptbench.timed_runs(outcome.records)]


def errors(outcome: SuiteOutcome) -> list[tuple[str, str]]:
  """The errors of the measured runs (a warm-up fails the same way before them)."""
  return [(r.error.type, r.error.message) for r in ckptbench.timed_runs(outcome.records) if r.failed]


def _committed_dirs(root: pathlib.Path) -> list[pathlib.Path]:
  return [p.parent for p in root.rglob("_CHECKPOINT_METADATA") if "tmp" not in p.parent.name]


def flip_chunks(root: pathlib.Path) -> bool:
  """Inverts the first two bytes of every raw Zarr 3 chunk (needs use_ocdbt and use_compression off).

  A chunk file starts with the array data (its shard index, if any, is at the
  end), so the file stays readable and only the values change.
  """
  chunks = [
      f for d in _committed_dirs(root) for f in d.rglob("*") if f.is_file() and "c" in f.relative_to(d).parts
  ]
  for chunk in chunks:
    data = bytearray(chunk.read_bytes())
    data[0] ^= 0xFF
    data[1] ^= 0xFF
    chunk.write_bytes(bytes(data))
  return bool(chunks)


def roll_back_latest_step(root: pathlib.Path) -> bool:
  """Replaces the files of the latest committed step with those of the one before."""
  steps = sorted(
      (int(d.name), d) for d in _committed_dirs(root) if d.name.isdigit()
  )
  if len(steps) < 2:
    return False
  (_, older), (_, latest) = steps[-2], steps[-1]
  shutil.rmtree(latest)
  shutil.copytree(older, latest)
  return True


class _Corrupter:
  calls = 0

  def __init__(self, at_start: int, action: Callable[[], bool]):
    self.at_start, self.action = at_start, action

  def start(self) -> None:
    type(self).calls += 1
    if type(self).calls == self.at_start:
      assert self.action(), "nothing to corrupt"

  def stop(self) -> dict:
    return {}


class corrupt_before:
  """Context manager: `action()` runs when the `nth` measured block starts."""

  def __init__(self, nth: int, action: Callable[[], bool]):
    self.nth, self.action = nth, action

  def __enter__(self):
    _Corrupter.calls = 0
    ckptbench.register_collector(CORRUPTER, lambda: _Corrupter(self.nth, self.action), default=True)
    return self

  def __exit__(self, *exc):
    _collector._REGISTRY.pop(CORRUPTER, None)
    return False
