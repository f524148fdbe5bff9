"""What the package index offers: released versions, asked with pip (`pip index versions`)."""

from __future__ import annotations

import functools
import subprocess
import sys

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

from ckptbench.errors import CkptbenchError

_NEWEST_SHOWN = 3


@functools.cache
def released_versions(package: str) -> tuple[Version, ...]:
  """The versions of `package` the index lists for this Python, oldest first.

  Raises:
    CkptbenchError: when the index does not know the package (or cannot be reached).
  """
  done = subprocess.run(
      (sys.executable, "-m", "pip", "index", "versions", package, "--disable-pip-version-check"),
      capture_output=True, text=True, timeout=300,
  )  # fmt: skip
  for line in done.stdout.splitlines():
    if line.startswith("Available versions:"):
      versions = []
      for text in line.split(":", 1)[1].split(","):
        try:
          versions.append(Version(text.strip()))
        except InvalidVersion:
          continue
      return tuple(sorted(versions))
  errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
  detail = errors[-1].removeprefix("ERROR: ") if errors else "no versions listed"
  raise CkptbenchError(f"package {package!r} was not found on the package index ({detail})")


def nearest(versions: tuple[Version, ...], wanted: Version, each_side: int = 2) -> list[Version]:
  """The released versions around `wanted`: up to `each_side` below it and above it."""
  below = [v for v in versions if v < wanted]
  above = [v for v in versions if v > wanted]
  return below[-each_side:] + above[:each_side]


def check_released(requirement: Requirement) -> None:
  """Checks that the package exists and that a pinned version (==X) was released.

  `ckptbench[extra]` names ckptbench's own extras: every environment installs this
  source tree, and uv adds the extras' packages to it.

  Raises:
    CkptbenchError: naming the package or version and the nearest released versions.
  """
  if requirement.name == "ckptbench":  # the source tree itself (with extras): never asked of the index
    if requirement.specifier:
      raise CkptbenchError(
          f"{requirement}: ckptbench comes from this source tree; name only its extras, e.g. ckptbench[torchax]"
      )
    return
  versions = released_versions(requirement.name)
  pins = [s.version for s in requirement.specifier if s.operator in ("==", "===") and "*" not in s.version]
  for pin in pins:
    try:
      wanted = Version(pin)
    except InvalidVersion:
      raise CkptbenchError(f"{requirement.name} {pin!r} is not a version number") from None
    if wanted not in versions:
      close = ", ".join(str(v) for v in nearest(versions, wanted))
      raise CkptbenchError(f"{requirement.name} {pin} is not a released version; nearest: {close}")
  if not pins and not any(requirement.specifier.contains(v, prereleases=True) for v in versions):
    newest = ", ".join(str(v) for v in versions[-_NEWEST_SHOWN:])
    raise CkptbenchError(f"no released {requirement.name} matches {requirement.specifier}; newest: {newest}")
