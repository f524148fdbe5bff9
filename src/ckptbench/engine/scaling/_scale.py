"""`ckptbench scale`: one suite at several host counts, as emulated hosts on this machine, and
the model that predicts larger counts.

Each host count runs the suite as `n` processes of one jax.distributed job (`launch`), every
process going to the store through its own shaped link, which counts its requests by kind. What
does not depend on this machine (requests, files, bytes, barriers) is exact; times share this
machine's cores and disk among the `n` processes, so they are inflated, and the machine's load is
recorded beside them. OUT holds `scale.json`, one results directory per host count
(`hosts_<n>/`, as `run` writes it), the suites run (`suites/`) and each launch's output (`logs/`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import os
import pathlib
import time
from typing import IO, Any, Iterator, Mapping, Sequence

import psutil

from ckptbench.config import load_suite
from ckptbench.distributed import launch_local
from ckptbench.errors import CkptbenchError
from ckptbench.results import read_document, read_records
from ckptbench.engine.scaling._metrics import COUNT, Measured, host_count_metrics
from ckptbench.engine.scaling._suite import memory_refusal, scaled_suites, write_suite
from ckptbench.stats import LAW_POINTS, PROFILES, BenchmarkModel, StoreProfile, model_benchmark
from ckptbench.storage import (
    DEFAULT_BUCKET,
    LINK_START_TIMEOUT_ENV,
    is_store_url,
    parse_store_url,
    start_emulator,
    stop_emulator,
)

SCALE_FILE = "scale.json"
# Every emulated host starts its own link while all of them start JAX on the same few cores.
LINK_START_S = 600
# 2: laws only from LAW_POINTS host counts; each fit, check and prediction names its counts.
SCHEMA_VERSION = 2
TIMES_NOTE = (
    "times and rates are inflated: the {n} emulated hosts shared this machine's {cpus} CPU cores and"
    " one disk; counts (requests, files, bytes, barriers) do not depend on its speed, and those whose"
    " repeat_spread is 0 repeated exactly (all GETs and LISTs include repeated reads of one object or"
    " listing, whose number varies with timing: they are counted apart as a rate, the distinct ones exactly)"
)


@dataclasses.dataclass(frozen=True)
class ScaleSettings:
  """The `ckptbench scale` flags."""

  suite: str
  output_dir: pathlib.Path
  hosts: tuple[int, ...]
  mode: str = "weak"
  axis: str = "fsdp"
  targets: tuple[int, ...] = (256, 1024, 4096)
  link: str = "rtt=0ms"
  checkpoint_root: str | None = None
  emulate: str | None = None
  store: StoreProfile = PROFILES["gcs"]
  save_interval_s: float = 60.0
  host_memory_mib: float | None = None
  fit_from: int = 1
  overrides: tuple[str, ...] = ()
  select: tuple[str, ...] = ()  # `-k`: only the benchmarks matching one of these, at every host count
  overwrite: bool = False
  resume: bool = False


def check_hosts(hosts: Sequence[int], targets: Sequence[int], fit_from: int) -> None:
  """Raises CkptbenchError for host counts the model cannot use: fewer than `LAW_POINTS` distinct
  counts from `fit_from` on cannot tell the growth laws apart (with 2, leave-one-out scores the
  constant law alone), so `scale` refuses before running anything and names the counts it needs."""
  given = ",".join(map(str, hosts))
  if min(hosts) < 1:
    raise CkptbenchError(f"Invalid value for --hosts={given}: host counts are >= 1")
  used = sorted({h for h in hosts if h >= fit_from})
  if len(used) < LAW_POINTS:
    needed = sorted(set(hosts))
    while len([h for h in needed if h >= fit_from]) < LAW_POINTS:
      needed.append(max(needed[-1] * 2, fit_from))
    raise CkptbenchError(
        f"Invalid value for --hosts={given}: telling growth laws apart needs {LAW_POINTS} distinct host counts"
        f" from --fit_from={fit_from} on, and these give {len(used)} ({', '.join(map(str, used)) or 'none'});"
        f" run e.g. --hosts {','.join(map(str, needed))}")  # fmt: skip
  if targets and min(targets) < 1:
    raise CkptbenchError(f"Invalid value for --predict={','.join(map(str, targets))}: host counts are >= 1")


def _prepare_out(out: pathlib.Path, overwrite: bool, resume: bool) -> None:
  if resume:
    out.mkdir(parents=True, exist_ok=True)
    return
  if (out / SCALE_FILE).exists() and not overwrite:
    raise CkptbenchError(f"output directory {out} already holds {SCALE_FILE}; pass --overwrite or choose another")
  if out.exists() and any(out.iterdir()) and not (out / SCALE_FILE).exists() and not overwrite:
    raise CkptbenchError(f"output directory {out} is not empty; choose another or pass --overwrite")
  out.mkdir(parents=True, exist_ok=True)


def _root(settings: ScaleSettings, suite_root: str | None) -> str:
  """The checkpoint root: the flag's, the suite's, or the emulator's bucket."""
  root = settings.checkpoint_root or suite_root or ""
  if settings.emulate and not is_store_url(root):
    return f"{'gs' if settings.emulate == 'gcs' else 's3'}://{DEFAULT_BUCKET}/scale"
  return root


@contextlib.contextmanager
def _environment(settings: ScaleSettings, root: str) -> Iterator[dict[str, str]]:
  """The processes' environment, with an emulator of the root's bucket when asked for one."""
  env = dict(os.environ)
  env.setdefault(LINK_START_TIMEOUT_ENV, str(LINK_START_S))
  if not settings.emulate:
    yield env
    return
  emulator, proc = start_emulator(settings.emulate, bucket=parse_store_url(root).bucket)
  try:
    env.update(emulator.env)
    yield env
  finally:
    stop_emulator(proc)


def _launch(n: int, devices: int, suite_file: pathlib.Path, out: pathlib.Path, settings: ScaleSettings,
            env: Mapping[str, str], log: IO[str]) -> dict[str, Any]:  # fmt: skip
  """Runs one host count; returns the machine's load around it.

  Every count measures host memory inside its timed runs: a run of several processes has no memory
  pass (engine/memory/_pass.py), and a law fitted across host counts compares one way of measuring.
  """
  args = [str(suite_file), "-o", str(out / f"hosts_{n}"), "--link", settings.link, "--no_progress", "--no_probe",
          "--no_views", "--remove_repeated_dir", "--host_memory", "inline",
          ] + (["--overwrite"] if settings.overwrite or settings.resume else [])  # fmt: skip
  args += [word for pattern in settings.select for word in ("-k", pattern)]
  before, start = os.getloadavg()[0], time.monotonic()
  with open(out / "logs" / f"hosts_{n}.log", "w", encoding="utf-8") as f:
    outcome = launch_local(n, args, devices_per_process=devices, env=env, out=f)
  load = {"loadavg_1m_before": before, "loadavg_1m_after": os.getloadavg()[0], "cpus": psutil.cpu_count(),
          "wall_s": round(time.monotonic() - start, 3)}  # fmt: skip
  if outcome.exit_code != 0:
    raise CkptbenchError(f"{n} hosts: {outcome.message}; its output is in {out / 'logs' / f'hosts_{n}.log'}")
  log.write(f"[scale] {n} hosts x {devices} devices: {load['wall_s']:.1f} s, load {before:.1f} -> "
            f"{load['loadavg_1m_after']:.1f} on {load['cpus']} cores\n")  # fmt: skip
  log.flush()
  (out / "logs" / f"hosts_{n}.load.json").write_text(json.dumps(load))
  return load


def _finished(n: int, out: pathlib.Path) -> dict[str, Any] | None:
  """The load of host count `n` when an earlier `scale` into `out` finished it (`--resume`), else None."""
  load = out / "logs" / f"hosts_{n}.load.json"
  if not (out / f"hosts_{n}" / "summary.json").exists() or not load.exists():
    return None
  finished = read_document(load)
  return finished if isinstance(finished, dict) else None  # not ours: measured again


def scale(settings: ScaleSettings, log: IO[str]) -> dict[str, Any]:
  """Runs the suite at every host count, fits the model and writes OUT/scale.json; returns it.

  Raises:
    CkptbenchError: bad input or host counts that cannot start here (before anything runs), or a
      host count whose launch failed (naming its log).
  """
  check_hosts(settings.hosts, settings.targets, settings.fit_from)
  suite = load_suite(settings.suite, settings.overrides)
  out = settings.output_dir
  suites = scaled_suites(suite, sorted(set(settings.hosts)), settings.mode, settings.axis,
                         _root(settings, suite.config.checkpoint_root))  # fmt: skip
  refusal = memory_refusal(suites)
  if refusal:
    raise CkptbenchError(refusal)
  _prepare_out(out, settings.overwrite, settings.resume)
  with _environment(settings, _root(settings, suite.config.checkpoint_root)) as env:
    (out / "logs").mkdir(exist_ok=True)
    measured: dict[int, dict[str, dict[str, Measured]]] = {}
    loads = {}
    for s in suites:
      done = _finished(s.hosts, out) if settings.resume else None
      if done is not None:
        log.write(f"[scale] {s.hosts} hosts: reusing {out / f'hosts_{s.hosts}'} (--resume)\n")
      loads[s.hosts] = done or _launch(s.hosts, s.devices_per_host, write_suite(s, out / "suites"), out, settings,
                                       env, log)  # fmt: skip
      measured[s.hosts] = host_count_metrics(read_records(out / f"hosts_{s.hosts}"))
  memory_mib = settings.host_memory_mib or psutil.virtual_memory().total / (1 << 20)
  result = scale_document(settings, suite.name, measured, loads, memory_mib, suites[0].devices_per_host)
  (out / SCALE_FILE).write_text(json.dumps(result, indent=1))
  return result


def _series(measured: Mapping[int, Mapping[str, Mapping[str, Measured]]]) -> dict[str, dict[str, dict[int, Measured]]]:
  """`{benchmark: {metric: {hosts: Measured}}}`, keeping what every host count measured."""
  benches = set.intersection(*(set(m) for m in measured.values()))
  out: dict[str, dict[str, dict[int, Measured]]] = {}
  for bench in sorted(benches):
    names = set.intersection(*(set(m[bench]) for m in measured.values()))
    first = next(iter(measured.values()))[bench]
    out[bench] = {name: {n: m[bench][name] for n, m in sorted(measured.items())} for name in first if name in names}
  return out


def scale_document(settings: ScaleSettings, suite_name: str, measured, loads, memory_mib: float, devices: int) -> dict:
  """scale.json: the settings, what was measured, the fits, the predictions and the limits."""
  series = _series(measured)
  doc: dict[str, Any] = {
      "schema_version": SCHEMA_VERSION, "suite": suite_name, "mode": settings.mode, "axis": settings.axis,
      "devices_per_host": devices, "hosts": sorted(measured), "fit_from": settings.fit_from, "targets": list(settings.targets),
      "link": settings.link, "store": dataclasses.asdict(settings.store),
      "save_interval_s": settings.save_interval_s, "host_memory_mib": memory_mib,
      "created_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
      "notes": [TIMES_NOTE.format(n=max(measured), cpus=psutil.cpu_count())],
      "load": {str(n): v for n, v in loads.items()},
      "measured": {}, "fits": {}, "no_law": {}, "predictions": {}, "store_times": {}, "store_times_left_out": {},
      "limits": {}, "commit_model": {},
  }  # fmt: skip
  for bench, metrics in series.items():
    model = model_benchmark(
        {name: {n: m.value for n, m in pts.items()} for name, pts in metrics.items()},
        {name: next(iter(pts.values())).kind for name, pts in metrics.items()},
        settings.targets, settings.store, save_interval_s=settings.save_interval_s, host_memory_mib=memory_mib,
        fit_from=settings.fit_from, repeats={name: {n: m.repeats for n, m in pts.items()} for name, pts in metrics.items()},
        first_hosts={name: next(iter(pts.values())).first_hosts for name, pts in metrics.items()},
    )  # fmt: skip
    doc["measured"][bench] = {
        name: {str(n): {"value": m.value, "kind": m.kind, "unit": m.unit, "inflated": m.kind != COUNT,
                        "repeat_spread": m.repeat_spread, "repeats": list(m.repeats), "first_hosts": m.first_hosts}
               for n, m in pts.items()}
        for name, pts in metrics.items()
    }
    _add_model(doc, bench, model)
  return doc


def _add_model(doc: dict[str, Any], bench: str, model: BenchmarkModel) -> None:
  doc["fits"][bench] = {
      name: {"law": m.fit.law, "formula": m.fit.formula, "a": m.fit.a, "b": m.fit.b,
             "from_hosts": sorted(set(m.fit.hosts)),
             "held_out_error": m.fit.held_out_error, "max_held_out_error": m.fit.max_held_out_error,
             "check": None if m.check is None else dataclasses.asdict(m.check), "no_check": m.no_check}
      for name, m in model.metrics.items()
  }  # fmt: skip
  doc["no_law"][bench] = dict(model.no_law)
  doc["predictions"][bench] = {
      name: {str(p.hosts): {"value": p.value, "low": p.low, "high": p.high, "dominant": p.dominant,
                            "from_hosts": list(p.from_hosts)} for p in m.predictions}
      for name, m in model.metrics.items()
  }  # fmt: skip
  doc["store_times_left_out"][bench] = dict(model.left_out)
  doc["store_times"][bench] = {
      op: {str(n): {"seconds": t.seconds, "terms": dict(t.terms), "dominant": t.dominant} for n, t in times.items()}
      for op, times in (("save", model.save), ("restore", model.restore))
  }
  doc["limits"][bench] = [dataclasses.asdict(limit) for limit in model.limits]
  commit = model.commit
  if model.commit_refused:
    doc["commit_model"][bench] = {"refused": model.commit_refused}
  else:
    doc["commit_model"][bench] = None if commit is None else {
        "formula": "a + b*requests*latency", "a": commit.fit.a, "b": commit.fit.b,
        "held_out_error": commit.fit.held_out_error, "max_held_out_error": commit.fit.max_held_out_error,
        "check": None if commit.check is None else dataclasses.asdict(commit.check),
        "seconds": {str(n): v for n, v in commit.seconds.items()}, "from_hosts": list(commit.from_hosts),
    }  # fmt: skip
