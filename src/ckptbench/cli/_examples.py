"""`ckptbench examples [NAME] [--yaml FILE]`: the example suites shipped in the package.

    ckptbench examples                               # list them
    ckptbench examples quickstart --yaml qs.yaml     # write one out to edit
    ckptbench run quickstart -o out/qs               # or run it by name

The suites are package data (ckptbench/examples/*.yaml; the repository's
examples/ points there), so an installed wheel has them too.
"""

from __future__ import annotations

import argparse
import difflib
import pathlib
import re
import shutil
import sys

from ckptbench.errors import CkptbenchError

_SUITE_NAME = re.compile(r"^suite_name:\s*[\"']?(.*?)[\"']?\s*$", re.M)


def _directory():
  import importlib.resources  # noqa: PLC0415  (tempfile, random: --version and --help never need them)

  return importlib.resources.files("ckptbench") / "examples"


def example_names() -> list[str]:
  """The names of the shipped example suites, sorted."""
  return sorted(p.name.removesuffix(".yaml") for p in _directory().iterdir() if p.name.endswith(".yaml"))


def example_text(name: str) -> str:
  """The YAML text of the example `name`; a CkptbenchError naming the close ones when there is none."""
  if name not in example_names():
    close = difflib.get_close_matches(name, example_names(), n=3, cutoff=0.5)
    hint = f"did you mean {' or '.join(close)}?" if close else "`ckptbench examples` lists them"
    raise CkptbenchError(f"no example suite named {name!r}; {hint}")
  return (_directory() / f"{name}.yaml").read_text()


def suite_file(given: str) -> str:
  """`given` as a suite file: a path that exists, or else the name of a shipped example.

  A name (no directory, no .yaml) that is not a file here is looked up among
  the examples, so `ckptbench run quickstart -o OUT` works from anywhere.
  """
  if pathlib.Path(given).exists() or "/" in given or given.endswith((".yaml", ".yml")):
    return given
  if given in example_names():
    return str(_directory() / f"{given}.yaml")  # package data is installed as files (wheels, editable installs)
  return given  # the loader reports the missing file, with its name


def register(subparsers) -> None:
  p = subparsers.add_parser(
      "examples", help="list the example suites, or write one out",
      description="List the example suites shipped with ckptbench, print one, or write it to a file"
      " to edit (`ckptbench run NAME` also runs one by name).",
  )  # fmt: skip
  p.add_argument("name", nargs="?", help="the example to print or write (default: list them all)")
  p.add_argument("--yaml", "-o", "--output", dest="output", metavar="FILE",
                 help="write the example to this file instead of printing it")  # fmt: skip
  p.add_argument("--overwrite", action="store_true", help="replace FILE if it exists")
  p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
  if args.name is None:
    _list()
    return 0
  text = example_text(args.name)
  if args.output is None:
    print(text, end="")
    return 0
  target = pathlib.Path(args.output)
  if target.exists() and not args.overwrite:
    raise CkptbenchError(f"{target} exists; pass --overwrite to replace it, or choose another file")
  target.parent.mkdir(parents=True, exist_ok=True)
  target.write_text(text)
  print(f"wrote {target}; run it with: ckptbench run {target} -o out/{args.name}")
  return 0


def _list() -> None:
  names = example_names()
  width = max(map(len, names))
  columns = shutil.get_terminal_size().columns if sys.stdout.isatty() else None  # piped: whole lines, for grep
  for name in names:
    match = _SUITE_NAME.search(example_text(name))
    line = f"{name:<{width}}  {match.group(1) if match else ''}"
    print(line if columns is None or len(line) <= columns else line[: columns - 3] + "...")
  print("write one out: ckptbench examples NAME --yaml FILE; run one: ckptbench run NAME -o OUT")
