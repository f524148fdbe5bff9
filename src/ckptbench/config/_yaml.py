"""Safe YAML loading that remembers the line of every key.

Only plain data is built (SafeLoader: no object construction from tags), and
every mapping key and sequence item gets its line number, so validation errors
can point at the exact place in the suite file.

What a suite may expand to is bounded before anything builds it: its bytes (`MAX_BYTES`), its
nesting (`MAX_DEPTH`, counted on the parser's events, which PyYAML produces without recursion), and
the values it holds once aliases and merge keys are expanded (`MAX_VALUES`, counted on the node
graph, each shared node once), so a few hundred bytes of nested aliases, a recursive alias or lists
nested thousands deep are one line naming the file and line, not gigabytes or a RecursionError.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any

import yaml

from ckptbench.errors import ConfigError

KeyPath = tuple[str | int, ...]
MAX_BYTES = 256 << 10  # the largest built-in example is 3 KiB
MAX_DEPTH = 64  # mappings and lists inside each other; a suite needs about 8
MAX_VALUES = 100_000  # scalars, mappings and lists once every alias is expanded


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
  if len(raw) > MAX_BYTES:
    raise ConfigError(f"is {len(raw):,} bytes; a suite file is at most {MAX_BYTES:,}", file=file)
  if b"\x00" in raw:
    raise ConfigError("is a binary file, not YAML", file=file)
  try:
    text = raw.decode("utf-8")
  except UnicodeDecodeError as e:
    raise ConfigError(f"is not UTF-8 text (byte {e.start})", file=file) from None
  return parse_yaml(text, file)


def parse_yaml(text: str, file: str = "<string>") -> LocatedDocument:
  """Parses a suite's YAML text (plain data only, bounded in size, nesting and expansion).

  Raises:
    ConfigError: naming `file` and the line, for text that is not such YAML.
  """
  if len(text) > MAX_BYTES:
    raise ConfigError(f"is {len(text):,} characters; a suite is at most {MAX_BYTES:,}", file=file)
  try:
    loader = yaml.SafeLoader(text)  # checks every character of a string at once
  except yaml.reader.ReaderError as e:
    line = text.count("\n", 0, e.position) + 1
    raise ConfigError(f"invalid YAML: the character U+{e.character:04X} is not allowed", file=file, line=line) from None
  try:
    _check_depth(text, file)
    node = loader.get_single_node()
    if node is None:
      raise ConfigError("the suite file is empty", file=file)
    _check_expansion(node, file)
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


def _check_depth(text: str, file: str, loader_class: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)) -> None:
  """Refuses nesting past MAX_DEPTH from the parser's events (libyaml's, when installed), before the
  recursive composer runs. Where libyaml stops (its own depth limit, a syntax error), PyYAML's parser
  counts again, and its error is the one the loader would give."""
  loader = loader_class(text)
  depth = 0
  try:
    while loader.check_event():
      event = loader.get_event()
      if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
        depth += 1
        if depth > MAX_DEPTH:
          raise ConfigError(f"nested more than {MAX_DEPTH} levels deep", file=file, line=event.start_mark.line + 1)
      elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
        depth -= 1
  except yaml.YAMLError:
    if loader_class is yaml.SafeLoader:
      raise
    _check_depth(text, file, yaml.SafeLoader)
  finally:
    loader.dispose()


def _check_expansion(root: yaml.Node, file: str) -> None:
  """Refuses a recursive alias, and a document that, once aliases expand, holds more than MAX_VALUES
  values or nests deeper than MAX_DEPTH (aliases can stack nodes that are each shallow).

  Each node is measured once (aliases share nodes; an alias names a node that came before it, so the
  walk meets it measured or open), so the count costs the file's size, not the expansion's, and this
  recursion goes no deeper than the text's nesting, which `_check_depth` bounded.
  """
  measured: dict[int, tuple[int, int]] = {}  # id -> (values, depth) once expanded
  open_nodes: set[int] = set()

  def measure(node: yaml.Node) -> tuple[int, int]:
    if id(node) in measured:
      return measured[id(node)]
    if id(node) in open_nodes:
      raise ConfigError("an alias refers to a node that holds it (a recursive alias)", file=file,
                        line=node.start_mark.line + 1)  # fmt: skip
    open_nodes.add(id(node))
    children = ([n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode)
                else node.value if isinstance(node, yaml.SequenceNode) else [])  # fmt: skip
    values, depth = 1, 0
    for child in children:
      child_values, child_depth = measure(child)
      values, depth = values + child_values, max(depth, child_depth)
    depth += not isinstance(node, yaml.ScalarNode)
    open_nodes.discard(id(node))
    if values > MAX_VALUES:
      raise ConfigError(f"expands to more than {MAX_VALUES:,} values (aliases repeat what they name)", file=file,
                        line=node.start_mark.line + 1)  # fmt: skip
    if depth > MAX_DEPTH:
      raise ConfigError(f"nested more than {MAX_DEPTH} levels deep once aliases expand", file=file,
                        line=node.start_mark.line + 1)  # fmt: skip
    measured[id(node)] = (values, depth)
    return values, depth

  measure(root)


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
      line = key_node.start_mark.line + 1
      key = loader.construct_object(key_node, deep=True) if isinstance(key_node, yaml.ScalarNode) else None
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
