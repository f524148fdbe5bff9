"""Baseline files: every benchmark of a suite with its raw samples, stored by label.

A baseline is `DIR/<label>.json` (label: the git sha of the code under test).
It holds, per benchmark key and metric, the raw per-repeat samples of every
host, their statistics per host and across hosts, and the run's manifest:

```json
{"schema_version": 1, "format": "ckptbench-baseline", "label": "3f9a...",
 "captured_at": "2026-11-22T08:00:00+00:00", "suite": "...", "manifest": {...},
 "benchmarks": {"<key>": {"name": "...", "generator": "...", "options": {...},
   "varying": {...}, "mesh": ..., "checkpoint_config": ..., "runs": 5, "failed": 0,
   "metrics": {"save_0_basics/time_s": {"unit": "s", "direction": "lower", "headline": true,
     "hosts": {"0": {"repeats": [0, 1, 2, 3, 4], "values": [...], "stats": {"n": 5, ...}}},
     "across_hosts": {"reduce": "max", "values": [...], "stats": {...}}}}}}}
```

`across_hosts.values` holds one sample per repeat, the worst host's (see
`ckptbench.stats.per_repeat_across_hosts`); comparisons use those samples.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import pathlib
import subprocess
from typing import Any, Iterable, Mapping

from ckptbench.core import safe_path_component
from ckptbench.errors import CkptbenchError
from ckptbench.stats import Direction, is_headline, metric_direction, per_repeat_across_hosts, summarize

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
_FORMAT = "ckptbench-baseline"
_REDUCE_NAME = {Direction.LOWER: "max", Direction.HIGHER: "min", Direction.NEUTRAL: "mean"}
_BENCHMARK_FIELDS = ("generator", "options", "varying", "mesh", "checkpoint_config")


def read_results(out_dir: str | os.PathLike) -> list[dict[str, Any]]:
  """The records of `OUT/results.jsonl`, warmup runs left out.

  Raises:
    CkptbenchError: when the file is missing or a line is not JSON.
  """
  path = pathlib.Path(out_dir) / "results.jsonl"
  if not path.is_file():
    raise CkptbenchError(
        f"{path} does not exist; pass the output directory of a finished `ckptbench run`"
    )
  records = []
  with path.open(encoding="utf-8") as f:
    for number, line in enumerate(f, 1):
      if not line.strip():
        continue
      try:
        record = json.loads(line)
      except json.JSONDecodeError as e:
        raise CkptbenchError(f"{path}:{number}: not a JSON line ({e.msg})") from None
      if not record.get("warmup", False):
        records.append(record)
  return records


def read_manifest(out_dir: str | os.PathLike) -> dict[str, Any]:
  """`OUT/manifest.json`, or {} when the run wrote none."""
  path = pathlib.Path(out_dir) / "manifest.json"
  if not path.is_file():
    return {}
  try:
    return json.loads(path.read_text(encoding="utf-8"))
  except json.JSONDecodeError as e:
    raise CkptbenchError(f"{path}: not valid JSON ({e.msg})") from None


def build_baseline(
    records: Iterable[Mapping[str, Any]], manifest: Mapping[str, Any], label: str
) -> dict[str, Any]:
  """The baseline document (see the module docstring) of a run's records.

  Warmup records and records of failed runs are left out of the samples; the
  failures are counted in `failed`.
  """
  benchmarks: dict[str, dict[str, Any]] = {}
  samples: dict[str, dict[str, dict[int, dict[int, float]]]] = {}
  units: dict[str, dict[str, str]] = {}
  failed_repeats: dict[str, set[int]] = {}
  suite = None
  for record in records:
    if record.get("warmup", False):
      continue
    key = str(record["key"])
    suite = suite or record.get("suite")
    entry = benchmarks.setdefault(
        key, {"name": record.get("benchmark", key), **{f: record.get(f) for f in _BENCHMARK_FIELDS}}
    )
    entry.setdefault("_repeats", set()).add(int(record.get("repeat", 0)))
    if record.get("error"):
      failed_repeats.setdefault(key, set()).add(int(record.get("repeat", 0)))
      continue
    host, repeat = int(record.get("host", 0)), int(record.get("repeat", 0))
    for tag, metric in (record.get("metrics") or {}).items():
      samples.setdefault(key, {}).setdefault(tag, {}).setdefault(host, {})[repeat] = float(
          metric["value"]
      )
      units.setdefault(key, {}).setdefault(tag, str(metric.get("unit", "")))
  for key, entry in benchmarks.items():
    repeats = entry.pop("_repeats")
    failed = failed_repeats.get(key, set())
    entry["runs"] = len(repeats)
    entry["failed"] = len(failed)
    entry["metrics"] = {
        tag: _metric_entry(tag, units[key][tag], by_host)
        for tag, by_host in sorted(samples.get(key, {}).items())
    }
  return {
      "schema_version": SCHEMA_VERSION,
      "format": _FORMAT,
      "label": label,
      "captured_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
      "suite": suite,
      "manifest": dict(manifest),
      "benchmarks": benchmarks,
  }


def _metric_entry(tag: str, unit: str, by_host: Mapping[int, Mapping[int, float]]) -> dict[str, Any]:
  direction = metric_direction(tag, unit)
  hosts = {}
  for host, by_repeat in sorted(by_host.items()):
    repeats = sorted(by_repeat)
    values = [by_repeat[r] for r in repeats]
    hosts[str(host)] = {"repeats": repeats, "values": values, "stats": _stats(values)}
  across = per_repeat_across_hosts(by_host, direction)
  return {
      "unit": unit,
      "direction": direction.value,
      "headline": is_headline(tag, unit),
      "hosts": hosts,
      "across_hosts": {"reduce": _REDUCE_NAME[direction], "values": across, "stats": _stats(across)},
  }


def _stats(values: list[float]) -> dict[str, float | int] | None:
  try:
    return summarize(values).to_dict()
  except ValueError:  # only NaN samples
    return None


def resolve_label(label: str | None = None, manifest: Mapping[str, Any] | None = None) -> str:
  """The baseline label: `label`, else $GIT_SHA, else the manifest's git sha, else `git` here.

  Falls back to "unknown" with a warning. The result is safe as a file name.
  """
  if label:
    return safe_path_component(label)
  sha = os.environ.get("GIT_SHA") or _manifest_sha(manifest or {}) or _git_head(pathlib.Path.cwd())
  if sha:
    return safe_path_component(sha)
  logger.warning(
      "no git sha found (not a git checkout, no $GIT_SHA); the baseline is labelled"
      " 'unknown': pass --baseline_label to name it"
  )
  return "unknown"


def _manifest_sha(manifest: Mapping[str, Any]) -> str | None:
  git = manifest.get("git")
  if isinstance(git, Mapping) and git.get("sha"):
    return str(git["sha"])
  return manifest.get("git_sha") or None


def _git_head(cwd: pathlib.Path) -> str | None:
  try:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
    )
  except (OSError, subprocess.TimeoutExpired):
    return None
  if done.returncode != 0:
    return None
  return done.stdout.strip() or None


def capture_baseline(
    out_dir: str | os.PathLike, capture_dir: str | os.PathLike, label: str | None = None
) -> pathlib.Path:
  """Writes `capture_dir/<label>.json` from the finished run in `out_dir`.

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
  manifest = read_manifest(out_dir)
  document = build_baseline(read_results(out_dir), manifest, resolve_label(label, manifest))
  if not document["benchmarks"]:
    raise CkptbenchError(f"{out_dir}/results.jsonl holds no measured run; nothing to capture")
  directory = pathlib.Path(capture_dir)
  directory.mkdir(parents=True, exist_ok=True)
  path = directory / f"{document['label']}.json"
  partial = path.with_name(path.name + ".partial")
  partial.write_text(json.dumps(document, indent=1, allow_nan=True) + "\n", encoding="utf-8")
  partial.replace(path)
  return path


def load_baseline(path: str | os.PathLike) -> dict[str, Any]:
  """Reads a baseline file, checking its format and schema version.

  Raises:
    CkptbenchError: when the file is missing, not JSON, not a baseline, or of
      another schema version.
  """
  path = pathlib.Path(path)
  if not path.is_file():
    raise CkptbenchError(f"baseline file {path} does not exist; capture one with --baseline_capture_path")
  try:
    document = json.loads(path.read_text(encoding="utf-8"))
  except json.JSONDecodeError as e:
    raise CkptbenchError(f"{path}: not valid JSON ({e.msg})") from None
  if not isinstance(document, dict) or document.get("format") != _FORMAT:
    raise CkptbenchError(f"{path} is not a ckptbench baseline (no \"format\": \"{_FORMAT}\")")
  version = document.get("schema_version")
  if version != SCHEMA_VERSION:
    raise CkptbenchError(
        f"{path} has schema_version {version}, this ckptbench reads {SCHEMA_VERSION};"
        " capture the baseline again with this version"
    )
  return document
