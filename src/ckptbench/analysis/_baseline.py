"""Baseline files: every benchmark of a suite with its raw samples, stored by label.

A baseline is `DIR/<label>.json` (label: the git sha of the code under test).
It holds, per benchmark key and metric, the raw per-repeat samples of every
host, their statistics per host and across hosts, and the run's manifest:

```json
{"schema_version": 1, "format": "ckptbench-baseline", "label": "3f9a...",
 "captured_at": "2026-11-22T08:00:00+00:00", "suite": "...", "backend": "cpu", "manifest": {...},
 "benchmarks": {"<key>": {"name": "...", "generator": "...", "options": {...},
   "varying": {...}, "mesh": ..., "checkpoint_config": ..., "runs": 5, "failed": 0,
   "metrics": {"save_0_basics/time_s": {"unit": "s", "direction": "lower", "headline": true,
     "hosts": {"0": {"repeats": [0, 1, 2, 3, 4], "values": [...], "stats": {"n": 5, ...}}},
     "across_hosts": {"reduce": "max", "values": [...], "stats": {...}}}}}}}
```

`backend` is what the run ran on (`ckptbench.results.run_backend`: "cpu", "tpu", or "cpu
(emulating tpu ...)" for a `simdevice:` suite); a run on another backend is not compared with it.
A file without the key takes its manifest's `backend`.

`across_hosts.values` holds one sample per repeat, the worst host's (see
`ckptbench.stats.per_repeat_across_hosts`); comparisons use those samples.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import pathlib
from typing import Any, Mapping, Sequence

from ckptbench.api import safe_path_component
from ckptbench.api import RunRecord, sampled_records
from ckptbench.api import is_judged
from ckptbench.errors import CkptbenchError
from ckptbench.results import git_state, now_iso
from ckptbench.results import read_outputs, run_backend
from ckptbench.results import decode_document, write_json_atomic
from ckptbench.storage import is_store_url, parse_store_url, read_object, write_object
from ckptbench.analysis._baseline_document import Baseline, BaselineBenchmark, MetricSamples, Samples
from ckptbench.stats import Direction, metric_direction, per_repeat_across_hosts, summarize_benchmarks

logger = logging.getLogger(__name__)

_REDUCE_NAME = {Direction.LOWER: "max", Direction.HIGHER: "min", Direction.NEUTRAL: "mean"}


def read_run(out_dir: str | os.PathLike) -> tuple[list[RunRecord], dict[str, Any]]:
  """The records and the manifest of a finished run.

  Raises:
    CkptbenchError: when `out_dir` holds no results.
  """
  run = read_outputs(out_dir)
  return run.results, run.manifest or {}


def build_baseline(
    records: Sequence[RunRecord], manifest: Mapping[str, Any], label: str
) -> Baseline:
  """The baseline document (see the module docstring) of a run's records.

  Warm-up runs are left out; failed runs are counted in `failed` and `errors`
  (as in summary.json) and give no samples.
  """
  # {key: {tag: {host: {repeat: value}}}}, from the records that succeeded.
  samples: dict[str, dict[str, dict[int, dict[int, float]]]] = {}
  for record in sampled_records(records):
    by_tag = samples.setdefault(record.key, {})
    for tag in record.metrics:
      value = record.value(tag)
      if value is not None:
        by_tag.setdefault(tag, {}).setdefault(record.host, {})[record.repeat] = value
  benchmarks = {}
  for summary in summarize_benchmarks(records):
    by_tag = dict(sorted(samples.get(summary.key, {}).items()))
    sampled = {tag: summary.metrics[tag] for tag in by_tag}
    benchmarks[summary.key] = BaselineBenchmark(
        dataclasses.replace(summary, metrics=sampled),
        {tag: _metric_samples(tag, sampled[tag].unit, by_host) for tag, by_host in by_tag.items()},
    )
  suite = next((r.suite for r in records if r.suite), None)
  return Baseline(label=label, captured_at=now_iso(), suite=suite, manifest=dict(manifest), benchmarks=benchmarks,
                  backend=run_backend(manifest))  # fmt: skip


def _metric_samples(tag: str, unit: str, by_host: Mapping[int, Mapping[int, float]]) -> MetricSamples:
  direction = metric_direction(tag, unit)
  hosts = {}
  for host, by_repeat in sorted(by_host.items()):
    repeats = sorted(by_repeat)
    hosts[host] = Samples([by_repeat[r] for r in repeats], repeats=repeats)
  across = Samples(per_repeat_across_hosts(by_host, direction), reduce=_REDUCE_NAME[direction])
  return MetricSamples(direction, is_judged(tag), hosts, across)


def resolve_label(label: str | None = None, manifest: Mapping[str, Any] | None = None) -> str:
  """The baseline label: `label`, else $GIT_SHA, else the manifest's git sha, else `git` here.

  Falls back to "unknown" with a warning. The result is safe as a file name.
  """
  if label:
    return safe_path_component(label)
  sha = os.environ.get("GIT_SHA") or _manifest_sha(manifest or {}) or git_state()["sha"]
  if sha:
    return safe_path_component(sha)
  logger.warning(
      "no git sha found (not a git checkout, no $GIT_SHA); the baseline is labelled"
      " 'unknown': pass --baseline_label to name it"
  )
  return "unknown"


def _manifest_sha(manifest: Mapping[str, Any]) -> str | None:
  git = manifest.get("git")
  return str(git["sha"]) if isinstance(git, Mapping) and git.get("sha") else None


def capture_baseline(
    out_dir: str | os.PathLike, capture_dir: str | os.PathLike, label: str | None = None
) -> pathlib.Path | str:
  """Writes `capture_dir/<label>.json` from the finished run in `out_dir`.

  `capture_dir` may be a gs:// or s3:// location (the URL is returned then).

  Args:
    out_dir: the run's output directory (results.jsonl, manifest.json).
    capture_dir: where baselines are kept; created when missing.
    label: the baseline's name; default: the git sha (see `resolve_label`).

  Returns:
    The path of the baseline file (an existing one with that label is replaced).

  Raises:
    CkptbenchError: when the run's results cannot be read or hold no benchmark.

  Example:
    >>> capture_baseline("out", "baselines")  # doctest: +SKIP
    PosixPath('baselines/3f9a1c....json')
  """
  records, manifest = read_run(out_dir)
  baseline = build_baseline(records, manifest, resolve_label(label, manifest))
  if not baseline.benchmarks:
    raise CkptbenchError(f"{out_dir} holds no measured run in results.jsonl; nothing to capture")
  if is_store_url(capture_dir):  # one PUT: readers see the old baseline or the new one
    url = parse_store_url(str(capture_dir)).join(f"{baseline.label}.json")
    write_object(url, json.dumps(baseline.to_json(), indent=1).encode())
    return str(url)
  directory = pathlib.Path(capture_dir)
  directory.mkdir(parents=True, exist_ok=True)
  path = directory / f"{baseline.label}.json"
  write_json_atomic(path, baseline.to_json())
  return path


def load_baseline(path: str | os.PathLike) -> Baseline:
  """Reads a baseline file, checking its format and schema version.

  Raises:
    CkptbenchError: when the file is missing, not JSON, not a baseline, or of
      another schema version.
  """
  if is_store_url(path):
    data = read_object(str(path))
  else:
    path = pathlib.Path(path)
    if not path.is_file():
      raise CkptbenchError(f"baseline file {path} does not exist; capture one with --baseline_capture_path")
    data = path.read_bytes()
  return Baseline.from_json(decode_document(data, str(path)), str(path))
