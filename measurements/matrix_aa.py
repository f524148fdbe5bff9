"""`ckptbench matrix` figures: an A/A matrix flags nothing; two releases; cold and warm environment cache.

1. A/A: the same orbax-checkpoint release twice (two environments with the same
   spec, one cached build), `--repeats` repeats interleaved. Goal: no headline
   metric called worse or better (what --fail_on_regression would fail on).
2. A/B: two releases (--a, --b) on the suite (default: the quick start), timed
   once with an empty environment cache (uv's own download cache stays warm, as
   on a developer's machine) and once with the cache filled: the second matrix
   starts running the suite within seconds.

Usage:
  .venv/bin/python measurements/matrix_aa.py [--suite examples/quickstart.yaml]
      [--a 0.11.30] [--b 0.12.8] [--repeats 5] [--skip_ab | --skip_aa]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
CKPTBENCH = [sys.executable, "-m", "ckptbench"]


def with_repeats(suite: pathlib.Path, repeats: int, work: pathlib.Path) -> pathlib.Path:
  text = re.sub(r"(?m)^num_repeats:.*$", f"num_repeats: {repeats}", suite.read_text())
  if "num_repeats:" not in text:
    text = f"num_repeats: {repeats}\n{text}"
  path = work / suite.name
  path.write_text(text)
  return path


def matrix(suite: pathlib.Path, out: pathlib.Path, versions: list[str], cache: pathlib.Path) -> dict:
  """Runs one matrix; returns its timings and verdict counts."""
  command = [*CKPTBENCH, "matrix", str(suite), "-o", str(out), "--overwrite"]
  for version in versions:
    command += ["--with", f"orbax-checkpoint=={version}"]
  t0 = time.perf_counter()
  first_round = None
  lines = []
  env = {**os.environ, "CKPTBENCH_ENV_CACHE": str(cache)}
  with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env) as proc:
    for line in proc.stdout:
      lines.append(line)
      if first_round is None and line.startswith("round 1 "):
        first_round = time.perf_counter() - t0 - float(line.rsplit(":", 1)[1].split()[0])
  wall = time.perf_counter() - t0
  if proc.returncode not in (0, 3):
    raise SystemExit(f"matrix failed ({proc.returncode}):\n" + "".join(lines[-15:]))
  document = json.loads((out / "comparison.json").read_text())
  counts: dict[str, int] = {}
  headline: dict[str, int] = {}
  for comparison in document["comparisons"].values():
    for row in comparison["rows"]:
      counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
      if row["judged"]:
        headline[row["verdict"]] = headline.get(row["verdict"], 0) + 1
  return {"wall_s": wall, "until_first_round_s": first_round, "verdicts": counts, "headline": headline,
          "document": document}  # fmt: skip


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--suite", type=pathlib.Path, default=REPO / "examples/quickstart.yaml")
  parser.add_argument("--a", default="0.11.30")
  parser.add_argument("--b", default="0.12.8")
  parser.add_argument("--repeats", type=int, default=5)
  parser.add_argument("--skip_ab", action="store_true", help="only the A/A matrix")
  parser.add_argument("--skip_aa", action="store_true", help="only the A/B matrices")
  args = parser.parse_args()
  with tempfile.TemporaryDirectory(prefix="matrix-bench-") as tmp:
    work = pathlib.Path(tmp)
    suite = with_repeats(args.suite.resolve(), args.repeats, work)
    cache = work / "env-cache"
    if not args.skip_aa:
      aa = matrix(suite, work / "aa", [args.b, args.b], cache)
      flagged = {v: n for v, n in aa["headline"].items() if v in ("worse", "better")}
      print(f"A/A orbax-checkpoint {args.b} twice, {args.repeats} repeats: headline verdicts {aa['headline']};"
            f" flagged: {flagged or 'nothing'} (goal: nothing); wall {aa['wall_s']:.0f} s", flush=True)  # fmt: skip
    if args.skip_ab:
      return
    cold_cache = work / "ab-cache"
    cold = matrix(suite, work / "ab", [args.a, args.b], cold_cache)
    warm = matrix(suite, work / "ab", [args.a, args.b], cold_cache)
    for name, result in (("cold", cold), ("warm", warm)):
      print(f"A/B {args.a} vs {args.b}, {name} environment cache: wall {result['wall_s']:.0f} s,"
            f" {result['until_first_round_s']:.1f} s before the first round")  # fmt: skip
    comparison = warm["document"]["comparisons"][f"orbax-checkpoint-{args.b}"]
    print(f"A/B headline rows ({args.b} against {args.a}, warm run):")
    for row in comparison["rows"]:
      if row["judged"]:
        ratio = "-" if row["ratio"] is None else f"{row['ratio']:.2f}x"
        interval = f"{row['low']}-{row['high']}"
        print(f"  {row['verdict']:>12}  {ratio:>6}  [{interval}]  {row['name']}  {row['metric']}")


if __name__ == "__main__":
  main()
