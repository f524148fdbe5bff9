"""`ckptbench port FILE...`: point generator modules written for Orbax's framework at ckptbench.

Rewrites the imports of `orbax.checkpoint._src.testing.benchmarks`, and the
dotted paths in strings (mock.patch targets), to `ckptbench.compat.orbax` (or
to the user's package for a generator module it holds) (a dry run printing the diff unless `--write`) and
lists, per file, what still needs a hand. Exit 0 when every file ported
cleanly, 1 when something needs a hand.
"""

from __future__ import annotations

import argparse

from ckptbench.errors import EXIT_BENCHMARK_FAILED, EXIT_OK


def register(subparsers) -> None:
  p = subparsers.add_parser(
      "port", help="rewrite Orbax benchmark modules' framework imports to ckptbench.compat.orbax",
      description="Rewrite the imports of Orbax's benchmark framework"
      " (orbax.checkpoint._src.testing.benchmarks) to ckptbench.compat.orbax and list what"
      " still needs a hand. A dry run printing the diff unless --write.",
  )  # fmt: skip
  p.add_argument("files", nargs="+", metavar="FILE", help="generator modules (.py)")
  p.add_argument("--write", action="store_true", help="write the ported modules in place")
  p.add_argument("--quiet", action="store_true", help="no diff, only the summary")
  p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
  from ckptbench.cli._porting import port_file  # noqa: PLC0415  (imports compat's modules, and JAX with them)

  results = [port_file(f, write=args.write) for f in args.files]
  for result in results:
    if not args.quiet and result.changed:
      print(result.diff(), end="")
  for result in results:
    action = "rewritten" if args.write else "to rewrite"
    lines = ", ".join(map(str, result.rewritten)) or "none"
    print(f"{result.path}: {len(result.rewritten)} line(s) {action} ({lines})")
    for problem in result.needs_hand:
      print(f"  needs a hand: {problem}")
  if not args.write and any(r.changed for r in results):
    print("dry run: nothing written; add --write to apply")
  return EXIT_BENCHMARK_FAILED if any(r.needs_hand for r in results) else EXIT_OK
