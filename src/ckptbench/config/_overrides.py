"""`--set KEY=VALUE`: change a suite key from the command line, validated like the file.

KEY is a path as errors print it (`num_repeats`, `mesh_config.ici_parallelism.fsdp`,
`benchmarks[0].options.use_ocdbt`); VALUE is YAML (`5`, `[true]`, `{fsdp: 4}`).
The override replaces the value in the parsed document before validation, so a
bad value is reported like a bad file entry, naming the override instead of a
line of the file.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from typing import Any, Sequence

from ckptbench.config._yaml import KeyPath, LocatedDocument, format_key_path, parse_yaml
from ckptbench.errors import CkptbenchError, ConfigError

_PART = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")


@dataclasses.dataclass(frozen=True)
class Override:
  """One `--set KEY=VALUE`: the key path, the parsed value and the text as given."""

  path: KeyPath
  value: Any
  text: str


def parse_key_path(key: str) -> KeyPath:
  """`benchmarks[0].options.use_ocdbt` -> ("benchmarks", 0, "options", "use_ocdbt").

  Raises:
    ValueError: when `key` is not such a path.
  """
  parts: list[str | int] = []
  pos = 0
  while pos < len(key):
    match = _PART.match(key, pos)
    if match is None or (pos == 0 and match.group(0).startswith(".")):
      raise ValueError(f"cannot read {key!r} as a key path (e.g. benchmarks[0].options.use_ocdbt)")
    parts.append(match.group(1) if match.group(1) is not None else int(match.group(2)))
    pos = match.end()
  if not parts or not isinstance(parts[0], str):
    raise ValueError(f"cannot read {key!r} as a key path (e.g. num_repeats)")
  return tuple(parts)


def parse_override(text: str) -> Override:
  """Parses `KEY=VALUE` (VALUE as YAML).

  Raises:
    CkptbenchError: naming the override when either half cannot be read.
  """
  key, sep, raw = text.partition("=")
  if not sep or not key.strip():
    raise CkptbenchError(f"--set {text}: expected KEY=VALUE, e.g. --set num_repeats=5")
  try:
    path = parse_key_path(key.strip())
    value = parse_yaml(raw).data if raw.strip() else None  # bounded as a suite file is
  except ValueError as e:
    raise CkptbenchError(f"--set {text}: {e}") from None
  except ConfigError as e:
    raise CkptbenchError(f"--set {text}: the value is not valid YAML ({e.message})") from None
  return Override(path, value, text)


def apply_overrides(doc: LocatedDocument, overrides: Sequence[Override]) -> LocatedDocument:
  """The document with every override applied (in order); the original is left alone.

  A mapping key may be new (e.g. `--set num_warmups=2`); a list index must exist.

  Raises:
    CkptbenchError: naming the override when its path does not lead anywhere.
  """
  if not overrides:
    return doc
  data = copy.deepcopy(doc.data)
  for override in overrides:
    node = data
    for depth, part in enumerate(override.path[:-1]):
      node = _child(node, part, override, depth)
    last = override.path[-1]
    if isinstance(last, int):
      if not isinstance(node, list) or not 0 <= last < len(node):
        raise _nowhere(override, len(override.path) - 1)
    elif not isinstance(node, dict):
      raise _nowhere(override, len(override.path) - 1)
    node[last] = override.value
  return dataclasses.replace(doc, data=data, overrides={**doc.overrides, **{o.path: o.text for o in overrides}})


def _child(node: Any, part: str | int, override: Override, depth: int) -> Any:
  if isinstance(part, int):
    if isinstance(node, list) and 0 <= part < len(node):
      return node[part]
    raise _nowhere(override, depth)
  if not isinstance(node, dict):
    raise _nowhere(override, depth)
  if node.get(part) is None:
    node[part] = {}  # e.g. --set mesh_config.ici_parallelism.fsdp=4 on a suite without a mesh
  return node[part]


def _nowhere(override: Override, depth: int) -> CkptbenchError:
  where = format_key_path(override.path[: depth + 1])
  return CkptbenchError(f"--set {override.text}: the suite has no {where} to set")
