"""The argument parser every subcommand uses: exact flags only, both spellings, one-line errors.

- No prefixes: argparse would take `--keep` as `--keep_checkpoints` and run
  something other than what was asked; here an unknown flag is an error naming
  the closest known one.
- Flags are declared (and shown in help and the docs) in snake_case, the
  spelling of Orbax's benchmark runner; the kebab-case spelling of each is
  accepted too (`--output-directory` is `--output_directory`).
- Errors are one line (no usage block), exit code 2.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from typing import NoReturn, Sequence

from ckptbench.errors import EXIT_USAGE


def _key(flag: str) -> str:
  """The spelling-free form of a long flag: `--no-views` and `--no_views` are both `--no_views`."""
  return "--" + flag[2:].replace("-", "_")


def _is_flag(token: str) -> bool:
  """Whether `token` looks like an option rather than a value (negative numbers are values)."""
  if not token.startswith("-") or token == "-" or token == "--":
    return False
  try:
    float(token)
  except ValueError:
    return True
  return False


class Parser(argparse.ArgumentParser):
  """An ArgumentParser with `allow_abbrev=False`, both flag spellings and one-line errors.

  Args (beyond argparse's):
    strict: refuse an unknown flag at once, naming the closest known one. Off for
      parsers that pick their own flags out of a longer line (`launch`).
  """

  def __init__(self, *args, strict: bool = True, **kwargs) -> None:
    kwargs["allow_abbrev"] = False
    super().__init__(*args, **kwargs)
    self.strict = strict

  def add_subparsers(self, **kwargs):
    kwargs.setdefault("parser_class", Parser)  # every subcommand gets the same rules
    return super().add_subparsers(**kwargs)

  def parse_known_args(self, args: Sequence[str] | None = None, namespace=None):
    tokens = self._spelled_as_declared(sys.argv[1:] if args is None else list(args))
    parsed, extras = super().parse_known_args(tokens, namespace)
    if self.strict:
      for token in extras:
        if _is_flag(token):
          self.error(self._unknown_flag(token))
    return parsed, extras

  def _long_flags(self) -> dict[str, str]:
    """Each long flag this parser declares, by its spelling-free key."""
    return {_key(s): s for s in self._option_string_actions if s.startswith("--")}

  def _spelled_as_declared(self, tokens: list[str]) -> list[str]:
    """The tokens with each known long flag in its declared spelling; none after `--`."""
    flags = self._long_flags()
    out = []
    for i, token in enumerate(tokens):
      if token == "--":
        return out + tokens[i:]
      name, eq, value = token.partition("=")
      if name.startswith("--") and _key(name) in flags:
        token = flags[_key(name)] + eq + value
      out.append(token)
    return out

  def _unknown_flag(self, token: str) -> str:
    name = token.partition("=")[0]
    flags = self._long_flags() if name.startswith("--") else {s: s for s in self._option_string_actions}
    key = _key(name) if name.startswith("--") else name
    prefixed = [s for k, s in flags.items() if k.startswith(key)]
    close = prefixed if len(prefixed) == 1 else [flags[k] for k in difflib.get_close_matches(key, flags, n=3, cutoff=0.7)]
    hint = f"; did you mean {' or '.join(close)}?" if close else f"; see {self.prog} --help"
    return f"unknown flag {name}{hint}"

  def error(self, message: str) -> NoReturn:
    self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")
