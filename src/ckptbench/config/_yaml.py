"""Safe YAML loading that remembers the line of every key.

Only plain data is built (SafeLoader: no object construction from tags), and
every mapping key and sequence item gets its line number, so validation errors
can point at the exact place in the suite file.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any

import yaml

from ckptbench.errors import ConfigError

KeyPath = tuple[str | int, ...]


@dataclasses.dataclass(frozen=True)
class LocatedDocument:
  """A parsed YAML document and the 1-based line of each key path."""

  data: Any
  file: str
  lines: dict[KeyPath, int]
  overrides: dict[KeyPath, str] = dataclasses.field(default_factory=dict)  # `--set` path -> its text

  def line_of(self, path: KeyPath) -> int | None:
    """The line of `path`, or of its nearest ancestor that has one."""
    path = tuple(path)
    while path:
      if path in self.lines:
        return self.lines[path]
      path = path[:-1]
    return self.lines.get((), None)

  def error(self, message: str, path: KeyPath = ()) -> ConfigError:
    key = format_key_path(path) or None
    path = tuple(path)
    for at, text in self.overrides.items():
      if path[: len(at)] == at:  # the value came from the command line, not the file
        return ConfigError(message, file=f"--set {text}", key=key)
    return ConfigError(message, file=self.file, line=self.line_of(path), key=key)


def format_key_path(path: KeyPath) -> str:
  out = ""
  for part in path:
    out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
  return out


def load_yaml_file(path: str | pathlib.Path) -> LocatedDocument:
  """Reads and parses a suite file; raises ConfigError for unreadable or invalid YAML."""
  file = str(path)
  try:
    raw = pathlib.Path(path).read_bytes()
  except FileNotFoundError:
    raise ConfigError("the suite file does not exist", file=file) from None
  except IsADirectoryError:
    raise ConfigError("is a directory, not a suite file", file=file) from None
  except OSError as e:
    raise ConfigError(f"cannot read the suite file ({e.strerror})", file=file) from None
  if b"\x00" in raw:
    raise ConfigError("is a binary file, not YAML", file=file)
  try:
    text = raw.decode("utf-8")
  except UnicodeDecodeError as e:
    raise ConfigError(f"is not UTF-8 text (byte {e.start})", file=file) from None
  return parse_yaml(text, file)


def parse_yaml(text: str, file: str = "<string>") -> LocatedDocument:
  try:
    loader = yaml.SafeLoader(text)  # checks every character of a string at once
  except yaml.reader.ReaderError as e:
    line = text.count("\n", 0, e.position) + 1
    raise ConfigError(f"invalid YAML: the character U+{e.character:04X} is not allowed", file=file, line=line) from None
  try:
    node = loader.get_single_node()
    if node is None:
      raise ConfigError("the suite file is empty", file=file)
    lines: dict[KeyPath, int] = {(): node.start_mark.line + 1}
    data = _build(loader, node, (), lines, file)
  except yaml.MarkedYAMLError as e:
    mark = e.problem_mark or e.context_mark
    line = mark.line + 1 if mark else None
    problem = e.problem or str(e)
    raise ConfigError(f"invalid YAML: {problem}", file=file, line=line) from None
  except yaml.YAMLError as e:
    raise ConfigError(f"invalid YAML: {e}", file=file) from None
  finally:
    loader.dispose()
  return LocatedDocument(data, file, lines)


_PLAIN_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"}


def _build(loader, node, path: KeyPath, lines: dict[KeyPath, int], file: str) -> Any:
  if not isinstance(node, yaml.ScalarNode) and node.tag not in _PLAIN_TAGS:
    raise ConfigError(
        f"YAML tag {node.tag!r} is not allowed: a suite holds plain data only",
        file=file, line=node.start_mark.line + 1, key=format_key_path(path) or None,
    )
  if isinstance(node, yaml.MappingNode):
    loader.flatten_mapping(node)  # resolves `<<` merge keys
    result: dict[Any, Any] = {}
    for key_node, value_node in node.value:
      key = loader.construct_object(key_node, deep=True)
      line = key_node.start_mark.line + 1
      if not isinstance(key, (str, int, float, bool)) or key is None:
        raise ConfigError(f"a mapping key must be a plain scalar, got {key!r}", file=file, line=line)
      key = str(key) if not isinstance(key, str) else key
      if key in result:
        raise ConfigError(
            f"duplicate key (first given on line {lines[path + (key,)]})",
            file=file, line=line, key=format_key_path(path + (key,)),
        )
      lines[path + (key,)] = line
      result[key] = _build(loader, value_node, path + (key,), lines, file)
    return result
  if isinstance(node, yaml.SequenceNode):
    items = []
    for i, item in enumerate(node.value):
      lines[path + (i,)] = item.start_mark.line + 1
      items.append(_build(loader, item, path + (i,), lines, file))
    return items
  return loader.construct_object(node, deep=True)
