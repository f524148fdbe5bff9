"""Entry point: `ckptbench <command> ...`.

Each subcommand lives in its own module `ckptbench.cli._<name>` with a
`register(subparsers)` function that adds its parser and sets `handler` to a
function `(args) -> int` (the exit code). The handler calls plain functions of
the library, so everything the CLI does is callable from Python too.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import logging
import os
import sys
from typing import Sequence

from ckptbench._escape import terminal_text
from ckptbench._version import __version__
from ckptbench.cli._parser import Parser
from ckptbench.errors import EXIT_INTERRUPTED, EXIT_USAGE, CkptbenchError

# One entry per subcommand module (ckptbench.cli._<name>).
_COMMANDS = (
    "run",
    "tune",
    "plan",
    "probe",
    "report",
    "export",
    "launch",
    "fixture",
    "compare",
    "goodput",
    "emulate",
    "matrix",
    "bisect",
    "examples",
    "port",
    "scale",
    "history",
)


def build_parser(commands: Sequence[str] = _COMMANDS) -> argparse.ArgumentParser:
  """The parser with the subcommands `commands` (all of them by default, as `--help` lists them)."""
  parser = Parser(
      prog="ckptbench", description="Benchmark ML checkpointing (Orbax, JAX, PyTorch)."
  )
  parser.add_argument("--version", action="version", version=f"ckptbench {__version__}")
  parser.add_argument("-v", "--verbose", action="store_true", help="show library logs (and, for run, a table per benchmark)")
  subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
  for name in commands:
    importlib.import_module(f"ckptbench.cli._{name}").register(subparsers)
  for command in subparsers.choices.values():  # `ckptbench plan -v` as `ckptbench -v plan`
    if "-v" not in command._option_string_actions:
      command.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="show library logs")
  return parser


def _command_word(words: Sequence[str]) -> str | None:
  """The word naming the subcommand: the first that is not the top-level -v (None for a flag such as --help)."""
  for word in words:
    if word not in ("-v", "--verbose"):
      return None if word.startswith("-") else word
  return None


def _commands_needed(words: Sequence[str]) -> Sequence[str]:
  """The one subcommand `words` names, else all of them (for help, or an error listing them).

  Importing every subcommand module and building its parser would cost `plan` some 20 ms;
  only the top-level `-v` may come before the command.
  """
  word = _command_word(words)
  return (word,) if word in _COMMANDS else _COMMANDS


def main(argv: list[str] | None = None) -> int:
  words = list(sys.argv[1:] if argv is None else argv)
  parser = build_parser(_commands_needed(words))
  word = _command_word(words)
  if word is not None and word not in _COMMANDS:
    close = difflib.get_close_matches(word, _COMMANDS, n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(close)}?" if close else "`ckptbench --help` lists them"
    parser.error(f"unknown command {word!r}; {hint}")
  args = parser.parse_args(words)
  args.argv = words  # `run --with` re-runs it in an environment
  args.own_process = argv is None  # the command line's process, not a program's call: `run` may fork it
  if not getattr(args, "handler", None):
    parser.print_help()
    return EXIT_USAGE
  logging.basicConfig(
      level=logging.INFO if args.verbose else logging.WARNING,
      format="%(levelname)s %(name)s: %(message)s",
  )
  try:
    code = int(args.handler(args))
  except CkptbenchError as e:
    print(f"ckptbench: error: {terminal_text(e)}", file=sys.stderr)  # the message may quote a file's bytes
    return e.exit_code
  except KeyboardInterrupt:  # a second Ctrl-C: finished runs are already on disk
    print("ckptbench: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED
  if argv is None and getattr(args, "exit_at_once", False):
    # A finished `run` has fsynced every result and started its views; tearing down
    # the interpreter (XLA clients, TensorStore pools, the cached pytree) would add
    # about a second of wall time that nobody waits for anything in.
    from ckptbench.distributed import leave  # noqa: PLC0415

    leave()  # with the other processes of a multi-process run, which JAX's exit hook would have done
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
  return code


if __name__ == "__main__":
  sys.exit(main())
