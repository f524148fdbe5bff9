"""The command-line interface: a thin layer over functions callable from Python."""

from __future__ import annotations

import os
import pathlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
  from ckptbench.cli._porting import PortResult


def main(argv: list[str] | None = None) -> int:
  """`ckptbench ARGV`; a reader that stops reading (`ckptbench examples | head -1`) ends it quietly, exit 0."""
  try:
    code = _answer(argv)
    sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
  except BrokenPipeError:
    # Python's recipe (docs of `signal`): point stdout at devnull so the exit's own flush finds no pipe.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
  return code


def _answer(argv: list[str] | None) -> int:
  """`ckptbench --version` answers before the parser and its subcommands are loaded."""
  if (sys.argv[1:] if argv is None else list(argv)) == ["--version"]:
    from ckptbench._version import __version__  # noqa: PLC0415

    print(f"ckptbench {__version__}")
    return 0
  from ckptbench.cli._main import main as parse_and_run  # noqa: PLC0415  (argparse, every subcommand's parser)

  return parse_and_run(argv)


def port_file(path: str | pathlib.Path, *, write: bool = False) -> PortResult:
  """`ckptbench port PATH` from Python: the port's diff and what needs a hand (`_porting.port_file`)."""
  from ckptbench.cli._porting import port_file as port  # noqa: PLC0415  (imports compat, and JAX with it)

  return port(path, write=write)


__all__ = ["main", "port_file"]
