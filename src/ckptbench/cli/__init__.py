"""The command-line interface: a thin layer over functions callable from Python."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
  """`ckptbench ARGV`; `ckptbench --version` answers before the parser and its subcommands are loaded."""
  if (sys.argv[1:] if argv is None else list(argv)) == ["--version"]:
    from ckptbench._version import __version__  # noqa: PLC0415

    print(f"ckptbench {__version__}")
    return 0
  from ckptbench.cli._main import main as parse_and_run  # noqa: PLC0415  (argparse, every subcommand's parser)

  return parse_and_run(argv)


__all__ = ["main"]
