"""The command-line interface: a thin layer over functions callable from Python."""

from ckptbench.cli._main import main

__all__ = ["main"]
