"""The history gate at scale and its rates: 10,000 series timed, and planted series counted.

- `speed`: a local history of `--runs` entries, each holding `--series` series (one benchmark
  variant each, 5 samples a run), read by `ckptbench history HIST --fail_on_change` three times
  in fresh processes: the first read (the entries opened one by one, the index and the analysis
  cache written), a read of the same history (the cache serves every series), and a read after
  one more run arrived (every series has a new run: the nightly case, every series analysed
  again). Before them, `history.analyse` alone on the same entries in this process, cold and
  from the cache, in wall and CPU seconds.
- `rates`: the gate on `--count` planted series per case (10 runs, then 1, 3, 5 or 8 runs at
  1.2x or 1.5x, or alike), at 8% and 15% between runs (5% within): the share whose gate fails
  on the newest run, how (worse on arrival, or a confirmed change); A/A with heavy tails between
  runs (on `--heavy_count` series, `--count` unless given), with the binomial (Wilson) 95%
  interval of its share; and the A/A share over a nightly sequence (runs 11 to 30, each judged
  as it arrives).

Usage:
  PYTHONPATH=src python measurements/history_gate.py speed [--series 10000] [--runs 30]
  PYTHONPATH=src python measurements/history_gate.py rates [--count 10000] [--heavy_count N]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.stats

import ckptbench
from ckptbench import history

_ENVIRONMENT = history.Environment({"ckptbench": ckptbench.__version__}, "cpu", "cpu", 2, 1, "ci", "bench")


def planted(count: int, before: int, after: int, factor: float, seed: int, between: float = 0.08,
            within: float = 0.05, samples: int = 5, first: int = 0, heavy: bool = False) -> list[history.HistoryEntry]:  # fmt: skip
  """`count` series of a 50 ms metric: `before` runs, then `after` runs at `factor`; runs apart by
  `between` (the standard deviation of their log levels: normal, or Student's t with 3 degrees of
  freedom when `heavy`, the odd far run of a shared machine)."""
  rng = np.random.default_rng(seed)
  runs = before + after
  steps = np.where(np.arange(runs) >= before, factor, 1.0)[:, None]
  spread = between / np.sqrt(3.0) * rng.standard_t(3, (runs, count)) if heavy else rng.normal(0.0, between, (runs, count))
  levels = 0.05 * np.exp(spread) * steps
  values = levels[..., None] * np.exp(rng.normal(0.0, within, (runs, count, samples)))
  entries = []
  for i in range(runs):
    points = tuple(history.Point(f"b{j}", f"k{j:05d}", "step_0_basics/time_s", "s", float(np.median(v)),
                                 float(v.min()), float(v.max()), tuple(v.tolist())) for j, v in enumerate(values[i]))  # fmt: skip
    n = first + i
    entries.append(history.HistoryEntry(f"2026{n:08d}-{seed:08x}", f"r{n + 1}",
                                        f"2026-01-01T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}+00:00",
                                        "nightly", _ENVIRONMENT, points))  # fmt: skip
  return entries


def _cpu() -> float:
  """CPU seconds of this process and of the children it waited for."""
  children = resource.getrusage(resource.RUSAGE_CHILDREN)
  return time.process_time() + children.ru_utime + children.ru_stime


def _timed(what: str, call) -> object:
  wall, cpu = time.perf_counter(), _cpu()
  result = call()
  print(f"  {what}: {time.perf_counter() - wall:.2f} s wall, {_cpu() - cpu:.2f} s CPU", flush=True)
  return result


def speed(series: int, runs: int) -> None:
  print(f"{series:,} series of {runs} runs (5 samples a run); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
  entries = planted(series, runs - 1, 1, 1.0, seed=1)
  history.analyse(planted(3, 9, 1, 1.0, seed=2))  # imports (scipy, ruptures) and tables, not timed
  cache = history.AnalysisCache()
  print("history.analyse in this process:")
  found = _timed("no cache", lambda: history.analyse(entries, cache=cache))
  _timed("every series from the cache", lambda: history.analyse(entries, cache=cache))
  print(f"  {len(found):,} series, {len(history.gate(found))} failing the gate")
  with tempfile.TemporaryDirectory(prefix="ckptbench-history-") as folder:
    hist = pathlib.Path(folder) / "hist"
    store = history.HistoryStore(hist)
    for entry in entries:
      store.append(entry)
    command = [sys.executable, "-m", "ckptbench", "history", str(hist), "--fail_on_change"]
    print("`ckptbench history HIST --fail_on_change`, each a fresh process (start-up and reading included):")
    for what in ("first read: entries one by one, index and cache written", "again: the cache serves every series"):
      _timed(what, lambda: subprocess.run(command, capture_output=True, check=False))
    store.append(planted(series, 0, 1, 1.0, seed=3, first=runs)[0])
    done = _timed("a new run in every series: each analysed again", lambda: subprocess.run(command, capture_output=True, text=True, check=False))
    print(f"  exit {done.returncode}; load average now {os.getloadavg()[0]:.1f}")


def _gate_rate(entries: list[history.HistoryEntry], count: int) -> tuple[float, float, float]:
  """Shares of the series whose gate fails on the newest run: in all, worse on arrival, by a change."""
  failing = history.gate(history.analyse(entries))
  arrival = {f.benchmark for f in failing if isinstance(f, history.Arrival)}
  change = {f.benchmark for f in failing if isinstance(f, history.Change)}
  return len(arrival | change) / count, len(arrival) / count, len(change) / count


def rates(count: int, heavy_count: int) -> None:
  print(f"the gate on {count:,} planted series per case; load average {os.getloadavg()[0]:.1f}")
  for between in (0.08, 0.15):
    print(f"\nruns {between:.0%} apart by chance, 5% within; 10 runs, then:")
    print("| step | runs after | gate fails | worse on arrival | confirmed change |\n|---|---|---|---|---|")
    for factor, after in [(1.0, 1), *((f, a) for f in (1.2, 1.5) for a in (1, 2, 3, 5, 8))]:
      total, arrival, change = _gate_rate(planted(count, 10, after, factor, seed=after * 10 + int(factor * 10),
                                                  between=between), count)  # fmt: skip
      print(f"| {'none (A/A)' if factor == 1.0 else f'{factor}x'} | {after} | {total:.1%} | {arrival:.1%} | {change:.1%} |",
            flush=True)  # fmt: skip
  for runs in (11, 30):
    total, arrival, change = _gate_rate(planted(heavy_count, runs - 1, 1, 1.0, seed=runs, heavy=True), heavy_count)
    interval = scipy.stats.binomtest(round(total * heavy_count), heavy_count).proportion_ci(0.95, method="wilson")
    print(f"A/A, heavy tails between runs (t, 3 degrees of freedom, 8%), run {runs}, {heavy_count:,} series: gate fails {total:.2%}"
          f" (95% interval {interval.low:.2%}-{interval.high:.2%}; on arrival {arrival:.2%}, a change {change:.2%})",
          flush=True)  # fmt: skip
  print("\nA/A, 8% between runs: runs 11 to 30 each judged as it arrives (the gate over a nightly sequence)")
  entries = planted(count // 10, 30, 0, 1.0, seed=99)
  failed = [_gate_rate(entries[:n], count // 10)[0] for n in range(11, 31)]
  print(f"  per run: mean {np.mean(failed):.2%}, most {max(failed):.2%} ({count // 10:,} series, 20 runs each)")


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("what", choices=("speed", "rates"))
  parser.add_argument("--series", type=int, default=10_000)
  parser.add_argument("--runs", type=int, default=30)
  parser.add_argument("--count", type=int, default=10_000)
  parser.add_argument("--heavy_count", type=int, help="series per heavy-tailed A/A case (default: --count)")
  args = parser.parse_args()
  if args.what == "speed":
    speed(args.series, args.runs)
  else:
    rates(args.count, args.heavy_count or args.count)


if __name__ == "__main__":
  main()
