"""Text from runs and users (suite, benchmark and option names, labels, messages) made safe for the
one place it goes: one function per target, and every view calls the one for its target.

- `html_text`: HTML text and attribute values.
- `script_json`: a value as JSON inside a `<script>` element. `<` is written `\\u003c` (as plotly's
  own encoder does), so neither `</script>` nor `<!--` in a label can end the element or swallow
  the rest of the page; `>`, `&` and the two JavaScript line separators likewise.
- `markdown_text`: a cell or line of Markdown (a CI job summary): no table-breaking `|`, no live
  HTML, no emphasis or links from the text's own characters, one line. An `_` between two letters
  or digits stays bare: it cannot start or end emphasis there (CommonMark's and Python-Markdown's
  rule), and names such as `save_0_basics` read as written.
- `markdown_code`: a Markdown code span on one line (a table cell's too): shown literally, its
  fence longer than any run of backticks inside, `|` escaped so a table keeps its cells.
- `terminal_text`: text printed to a terminal: escape sequences (ANSI colours, OSC titles and
  links) and other control characters removed, so a label cannot rewrite the screen.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

_SCRIPT_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_SCRIPT_UNSAFE_RE = re.compile("[<>&\u2028\u2029]")
# Markdown's punctuation that can start emphasis, code, links, headings, lists or tables.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*{}\[\]()#|~>]|(?<![^\W_])_|_(?![^\W_]))")
# ESC sequences (CSI `ESC [ ... final`; OSC, DCS, APC, PM and SOS strings to BEL or ST; two-byte ones),
# their 8-bit C1 forms, and every other C0/C1 control character but tab and newline.
_TERMINAL_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


def html_text(value: Any) -> str:
  """`value` as HTML text or a quoted attribute's value."""
  return html.escape(str(value), quote=True)


def script_json(value: Any, **dumps: Any) -> str:
  """`value` as JSON safe to place inside a `<script>` element (`dumps`: json.dumps's options)."""
  return _SCRIPT_UNSAFE_RE.sub(lambda m: _SCRIPT_UNSAFE[m.group()], json.dumps(value, **dumps))


def markdown_text(value: Any) -> str:
  """`value` as literal Markdown text on one line: its specials backslash-escaped, `<` and `&` as entities."""
  text = " ".join(str(value).split())
  text = text.replace("&", "&amp;").replace("<", "&lt;")
  return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def markdown_code(value: Any) -> str:
  """`value` as a Markdown code span on one line: literal text, `|` escaped for a table's cell."""
  text = " ".join(str(value).split()).replace("|", "\\|")
  fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
  pad = " " if text.startswith("`") or text.endswith("`") else ""
  return f"{fence}{pad}{text}{pad}{fence}"


def terminal_text(value: Any) -> str:
  """`value` without escape sequences or control characters (tab and newline kept)."""
  return _TERMINAL_SEQUENCE.sub("", str(value))
