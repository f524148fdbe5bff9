"""An environment's spec: the requirements one `--with` names, its label and its cache key."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import sys

from packaging.requirements import InvalidRequirement, Requirement

from ckptbench.errors import CkptbenchError

_LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")


@dataclasses.dataclass(frozen=True)
class EnvSpec:
  """The packages of one isolated environment (ckptbench itself is always added).

  Attributes:
    text: the `--with` value as given, e.g. "orbax-checkpoint==0.12.7 jax==0.10.1".
    requirements: the parsed requirement specifiers.
    label: the directory name of its results, e.g. "orbax-checkpoint-0.12.7".
  """

  text: str
  requirements: tuple[Requirement, ...]
  label: str

  def cache_key(self, project_fingerprint: str) -> str:
    """The environment's cache key: its requirements, the Python and ckptbench's own dependencies."""
    blob = json.dumps(
        {
            "requirements": sorted(str(r) for r in self.requirements),
            "python": list(sys.version_info[:3]),
            "project": project_fingerprint,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def parse_with(text: str) -> EnvSpec:
  """Parses one `--with` value: requirement specifiers separated by spaces or commas between them.

  Raises:
    CkptbenchError: when a specifier does not parse.
  """
  parts = [p for p in re.split(r"\s+|,\s*(?=[A-Za-z])", text.strip()) if p]
  if not parts:
    raise CkptbenchError("--with needs at least one requirement, e.g. --with \"orbax-checkpoint==0.12.7\"")
  requirements = []
  for part in parts:
    try:
      requirements.append(Requirement(part))
    except InvalidRequirement as e:
      raise CkptbenchError(f"--with {text!r}: {part!r} is not a requirement specifier ({e})") from None
  label = _LABEL_UNSAFE.sub("_", "_".join(part.replace("==", "-") for part in parts))
  return EnvSpec(text=text, requirements=tuple(requirements), label=label)


def unique_labels(specs: list[EnvSpec]) -> list[EnvSpec]:
  """The specs with labels made unique (an A/A matrix names the same spec twice)."""
  seen: dict[str, int] = {}
  out = []
  for spec in specs:
    n = seen.get(spec.label, 0)
    seen[spec.label] = n + 1
    out.append(spec if n == 0 else dataclasses.replace(spec, label=f"{spec.label}_{n + 1}"))
  return out
