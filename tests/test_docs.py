"""README.md and docs/*.md work when followed top to bottom on a fresh clone.

Every ```bash / ```sh and ```python block runs, in page order (README first, then
docs/ by name), in one scratch copy of the repository, so a block sees what the
blocks before it wrote (`out/qs` from the quick start, `baselines/`). Shell blocks
run under `bash -e` in the scratch directory, after the `source`/`export` lines of
the blocks before them (activating the virtual environment carries on, as in a
terminal); Python blocks run in a fresh interpreter there. `.venv` in the scratch
copy is the environment running this test.

A block that needs what a test cannot have (a server that keeps running, a
cluster, a cloud bucket, a network build) says so in an HTML comment right above
it and is skipped with that reason:

    <!-- docs-test: skip needs a Kubernetes cluster -->

Kept fast: the quick-start suite in the scratch copy is shrunk to a 512x512 array,
and its adaptive repeats get a 5 s budget instead of 90 s (at that size a sweep is
rarely decided, so each of the walkthrough's seven runs would otherwise take its 60
rounds; what is checked here is that every command works, which a run stopped by its
budget after one round shows as well as one after fifteen: verdicts are tested in
test_verdicts.py); the walkthrough's commands are unchanged, only the data and the budget are smaller.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELLS = {"bash", "sh", "shell"}
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
_MARKER = re.compile(r"<!--\s*docs-test:\s*skip\s+(.+?)\s*-->", re.S)
# Smaller data in the scratch copy's suites: (file, text, replacement).
_SHRINK = [
    ("examples/quickstart.yaml", "shape: [8192, 8192]", "shape: [512, 512]"),
    ("examples/quickstart.yaml", "\ntime_budget_s: 90\n", "\ntime_budget_s: 5\n"),
    ("examples/three_factor.yaml", "shape: [8192, 8192]", "shape: [512, 512]"),
    ("examples/three_factor.yaml", "\ntime_budget_s: 300\n", "\ntime_budget_s: 5\n"),
]
_BLOCK_TIMEOUT_S = 600


@dataclasses.dataclass(frozen=True)
class Block:
  page: pathlib.Path
  line: int
  language: str
  code: str
  skip: str | None  # the reason its marker gives

  @property
  def where(self) -> str:
    return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: pathlib.Path) -> list[Block]:
  """The shell and Python blocks of a page, with the skip reason of a marker right above each."""
  text = page.read_text()
  found = []
  for match in _FENCE.finditer(text):
    language = match.group(1).lower()
    if language not in SHELLS | {"python"}:
      continue
    before = text[: match.start()].rstrip()
    marker = _MARKER.fullmatch(before[before.rfind("<!--"):]) if before.endswith("-->") else None
    skip = " ".join(marker.group(1).split()) if marker else None
    line = text.count("\n", 0, match.start()) + 1
    found.append(Block(page, line, language, match.group(2), skip))
  return found


def _scratch_clone(root: pathlib.Path) -> pathlib.Path:
  """The repository's files (tracked, and new ones git does not ignore) copied into `root`."""
  listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                          check=True, capture_output=True, text=True).stdout.split("\0")  # fmt: skip
  for name in filter(None, listed):
    source = REPO / name
    if source.is_symlink():  # examples/ links into the package
      (root / name).parent.mkdir(parents=True, exist_ok=True)
      (root / name).symlink_to(os.readlink(source))
    elif source.is_file():
      (root / name).parent.mkdir(parents=True, exist_ok=True)
      shutil.copy2(source, root / name)
  for name, old, new in _SHRINK:
    path = root / name
    assert old in path.read_text(), f"{name} no longer has {old!r}: update _SHRINK"
    path.write_text(path.read_text().replace(old, new))
  (root / ".venv").symlink_to(pathlib.Path(sys.prefix))
  return root


def _environ(clone: pathlib.Path) -> dict[str, str]:
  env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "VIRTUAL_ENV", "PYTHONPATH")}
  env["PYTHONPATH"] = str(clone / "src")  # the scratch copy's code, as an editable install there would be
  env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != str(pathlib.Path(sys.prefix) / "bin"))
  return env


def _carried(code: str) -> list[str]:
  """The lines of a shell block that later blocks inherit, as later commands in a terminal would."""
  return [line for line in code.splitlines() if re.match(r"\s*(source|\.|export)\s", line)]


def test_every_page_has_blocks_and_markers_name_a_reason():
  every = [b for page in PAGES for b in blocks(page)]
  assert len(every) >= 10
  assert all(b.skip for b in every if b.skip is not None)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # about ten command-line runs of the quick start in a row (each block has its own limit)
def test_the_readme_and_docs_work_top_to_bottom(tmp_path):
  clone = _scratch_clone(tmp_path / "clone")
  env = _environ(clone)
  prelude: list[str] = []
  ran, skipped = [], []
  for page in PAGES:
    for block in blocks(page):
      if block.skip is not None:
        skipped.append(f"{block.where}: {block.skip}")
        continue
      if block.language == "python":
        command = [sys.executable, "-c", block.code]
      else:
        command = ["bash", "-e", "-o", "pipefail", "-c", "\n".join([*prelude, block.code])]
        prelude += _carried(block.code)
      started = time.perf_counter()
      done = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True, timeout=_BLOCK_TIMEOUT_S)
      assert done.returncode == 0, (
          f"{block.where} ({block.language}) exited {done.returncode}:\n{block.code}\n"
          f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
      )
      ran.append(f"{block.where} ({time.perf_counter() - started:.0f} s)")
  print(f"ran {len(ran)} blocks: {', '.join(ran)}")
  print("skipped:\n  " + "\n  ".join(skipped))
  assert ran
