"""The argument parser every subcommand uses: exact flags only, both spellings, one-line errors.

- No prefixes: argparse would take `--keep` as `--keep_checkpoints` and run
  something other than what was asked; here an unknown flag is an error naming
  the closest known one.
- One spelling: flags are declared (and shown in help, the docs and messages)
  in snake_case, the spelling of Orbax's benchmark runner; the kebab-case
  spelling of each is accepted too (`--output-directory` is `--output_directory`).
- Old names stay accepted, never shown: a flag's names up to its first long one
  are its own (`-o, --output_directory`); any after it are old spellings that
  users' scripts may hold (`add_argument("--time_budget", "--time_budget_s")`),
  taken as the flag and left out of help and messages.
- Errors are one line (no usage block), exit code 2.
"""

from __future__ import annotations

import argparse
import copy
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


def shown_names(action: argparse.Action) -> list[str]:
  """The names of `action` that help and messages show: up to its first long one (the rest are old names)."""
  names = action.option_strings
  first_long = next((i for i, name in enumerate(names) if name.startswith("--")), len(names) - 1)
  return names[: first_long + 1]


class _OneSpellingHelp(argparse.HelpFormatter):
  """Help that lists each flag by its own names, not its old ones."""

  def _format_action_invocation(self, action: argparse.Action) -> str:
    if len(shown_names(action)) < len(action.option_strings):
      action = copy.copy(action)
      action.option_strings = shown_names(action)
    return super()._format_action_invocation(action)


class Parser(argparse.ArgumentParser):
  """An ArgumentParser with `allow_abbrev=False`, both flag spellings and one-line errors.

  Args (beyond argparse's):
    strict: refuse an unknown flag at once, naming the closest known one. Off for
      parsers that pick their own flags out of a longer line (`launch`).
  """

  def __init__(self, *args, strict: bool = True, **kwargs) -> None:
    kwargs["allow_abbrev"] = False
    kwargs.setdefault("formatter_class", _OneSpellingHelp)
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
    """Each long flag this parser declares (old names too), by its spelling-free key."""
    return {_key(s): s for s in self._option_string_actions if s.startswith("--")}

  def _own_name(self, flag: str) -> str:
    """The name help shows for the flag `flag` (declared spelling) names."""
    return shown_names(self._option_string_actions[flag])[-1]

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
    close = list(dict.fromkeys(self._own_name(flag) for flag in close))  # an old name suggests the flag's own
    hint = f"; did you mean {' or '.join(close)}?" if close else f"; see {self.prog} --help"
    return f"unknown flag {name}{hint}"

  def error(self, message: str) -> NoReturn:
    for action in self._actions:  # argparse names a flag by all its names: "argument -o/--output_directory/--out"
      if len(shown_names(action)) < len(action.option_strings):
        message = message.replace("/".join(action.option_strings), "/".join(shown_names(action)))
    self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")
