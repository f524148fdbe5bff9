"""The sweep's effects, as the console and the report show them: a row per main effect and interaction, a
column per judged metric, and the conditional table of each decided interaction. Read from summary.json's
`effects` and `interactions` (computed once, analysis/_effects.py), never recomputed here. Also the
answer of `ckptbench tune`."""

from __future__ import annotations

import collections
import json
import pathlib
from typing import Any, Mapping

from rich.console import Console
from rich.table import Table

from ckptbench.api import ConditionalRecord, EffectRecord, InteractionRecord, SuiteSummary, Tag, judged_as
from ckptbench.api import level_labels, threshold_text
from ckptbench.analysis import decided_interactions
from ckptbench._escape import html_text, terminal_text
from ckptbench.views._report_html import table
from ckptbench.views._terminal import make_console, markup_text

_STYLE = {"better": "green", "worse": "bold red", "inconclusive": "yellow"}

EFFECTS_RULE = (
    "effects: Huber's robust fit on the log of each metric, effect-coded, every interaction of the factors and the"
    " round as a block; a main effect is the ratio of a level to the reference level averaged over the other factors, an"
    " interaction the ratio of ratios; verdicts by the rule of every comparison, Holm-corrected across a metric's"
    " terms (each interval at its Holm step's level)"
)


class _LevelNames:
  """Every factor's levels named as every table names them (api/_levels.py): `save_concurrent_gb=1`,
  `checkpoint_config=spec: 16 arrays`, never a level's whole text."""

  def __init__(self, summary: SuiteSummary) -> None:
    seen: dict[str, list[Any]] = collections.defaultdict(list)
    for effect in summary.effects:
      seen[effect.factor] += [effect.level, effect.reference_level]
    for interaction in summary.interactions:
      for factor in interaction.factors:
        seen[factor] += [interaction.levels[factor], interaction.reference_levels[factor]]
      for row in interaction.conditional:
        seen[row.factor] += [row.level, row.reference_level]
        seen[row.given_factor].append(row.given_level)
    self._names = {factor: dict(zip(map(_identity, levels), level_labels(levels))) for factor, levels in seen.items()}

  def __call__(self, factor: str, level: Any) -> str:
    return f"{factor}={self._names[factor][_identity(level)]}"

  def term(self, term: EffectRecord | InteractionRecord) -> str:
    """`use_ocdbt=True vs False`, or `use_ocdbt=True x use_zarr3=True` for an interaction."""
    if isinstance(term, InteractionRecord):
      return " x ".join(self(k, v) for k, v in term.levels.items())
    return f"{self(term.factor, term.level)} vs {self._names[term.factor][_identity(term.reference_level)]}"

  def effect(self, row: ConditionalRecord) -> str:
    return f"{self(row.factor, row.level)} vs {self._names[row.factor][_identity(row.reference_level)]}"


def _identity(level: Any) -> str:
  return json.dumps(level, sort_keys=True, default=str)


def _bounds(low: float | None, high: float | None) -> str:
  return " [no interval]" if low is None or high is None else f" [{low:.3g}-{high:.3g}]"


def _verdict_text(term: EffectRecord | InteractionRecord) -> str:
  """`0.52x [0.50-0.55] better`, with the rounds a decision needs when inconclusive and the combinations
  averaged over when some cells were not measured."""
  text = f"{term.ratio:.3g}x{_bounds(term.low, term.high)} {term.verdict.value}"
  if term.repeats_needed:
    text += f" (~{term.repeats_needed} rounds)"
  if term.combinations < term.possible:
    text += f" (over {term.combinations} of {term.possible})"
  return text


def _grid(summary: SuiteSummary) -> tuple[list[str], list[str], dict[tuple[str, str], EffectRecord | InteractionRecord]]:
  """(the terms' names in order, the metrics in order, (term, metric) -> record)."""
  terms: dict[str, None] = {}
  metrics: dict[str, None] = {}
  cells = {}
  names = _LevelNames(summary)
  for record in (*summary.effects, *summary.interactions):
    name = names.term(record)
    terms[name], metrics[record.metric] = None, None
    cells[(name, record.metric)] = record
  return list(terms), list(metrics), cells


def _label(tag: str) -> str:
  """`save time`: the metric as the verdict table names it."""
  parts, judged = Tag.parse(tag), judged_as(tag)
  return f"{parts.op.replace('_', ' ')} {judged.label}" if judged else tag


def effects_tables(summary: SuiteSummary) -> list[Table]:
  """The console's effects table and one conditional table per decided interaction (none without effects)."""
  terms, metrics, cells = _grid(summary)
  if not terms:
    return []
  threshold = (summary.effects or summary.interactions)[0].threshold
  out = Table(title=markup_text(f"effects of each factor (ratio [interval] verdict, at {threshold_text(threshold)})"),
              title_justify="left", title_style="bold")  # fmt: skip
  out.add_column("term", overflow="fold")
  for metric in metrics:
    out.add_column(markup_text(_label(metric)), justify="right", overflow="fold")
  for name in terms:
    row = [markup_text(name)]
    for metric in metrics:
      record = cells.get((name, metric))
      text = "-" if record is None else markup_text(_verdict_text(record))
      style = _STYLE.get(record.verdict.value) if record else None
      row.append(f"[{style}]{text}[/]" if style else text)
    out.add_row(*row)
  tables = [out]
  for interaction in decided_interactions(summary.interactions):
    tables.append(_conditional_table(interaction, _LevelNames(summary)))
  return tables


def _conditional_table(interaction: InteractionRecord, names: _LevelNames) -> Table:
  a, b = interaction.factors
  title = (f"{_label(interaction.metric)}: {a} and {b} interact ({_verdict_text(interaction)}): each one's effect at"
           " each level of the other")  # fmt: skip
  out = Table(title=markup_text(title), title_justify="left", title_style="bold")
  for column in ("effect", "where", "ratio [interval]"):
    out.add_column(markup_text(column), justify="right" if column.startswith("ratio") else "left")
  for row in interaction.conditional:
    out.add_row(markup_text(names.effect(row)), markup_text(names(row.given_factor, row.given_level)),
                markup_text(f"{row.ratio:.3g}x{_bounds(row.low, row.high)}"))  # fmt: skip
  return out


def print_effects(summary: SuiteSummary, console: Console) -> None:
  """The effects tables, then the rule in one line (nothing for a sweep without effects)."""
  tables = effects_tables(summary)
  for part in tables:
    console.print(part)
  if tables:
    console.print(markup_text(EFFECTS_RULE), highlight=False)


def effects_section(summary: SuiteSummary | None) -> str:
  """The report's effects section: the same tables as the console's."""
  if summary is None:
    return ""
  terms, metrics, cells = _grid(summary)
  if not terms:
    return ""
  rows = [[name, *(_verdict_text(cells[(name, m)]) if (name, m) in cells else "-" for m in metrics)] for name in terms]
  parts = ["<h2>effects of each factor</h2>", table(["term", *(_label(m) for m in metrics)], rows, numeric_from=99)]
  names = _LevelNames(summary)
  for interaction in decided_interactions(summary.interactions):
    a, b = interaction.factors
    parts.append(f"<h3>{html_text(_label(interaction.metric))}: {html_text(a)} and {html_text(b)} interact"
                 f" ({html_text(_verdict_text(interaction))})</h3>")  # fmt: skip
    parts.append(table(["effect", "where", "ratio [interval]"], [
        [names.effect(r), names(r.given_factor, r.given_level), f"{r.ratio:.3g}x{_bounds(r.low, r.high)}"]
        for r in interaction.conditional
    ], numeric_from=99))  # fmt: skip
  parts.append(f"<p class=note>{html_text(EFFECTS_RULE)}</p>")
  return "\n".join(parts)


def print_tune(answer: str | None, document: Mapping[str, Any], path: pathlib.Path, console: Console | None = None) -> None:
  """`ckptbench tune`'s answer: the best setting as one line of YAML first, then what it rests on."""
  console = console or make_console()
  if answer is None:
    console.print(f"no answer: {markup_text(_no_answer(document))} (see {markup_text(str(path))})", highlight=False)
    return
  console.print(terminal_text(answer), markup=False, highlight=False, soft_wrap=True)
  best = document["best"]
  unit = best.get("unit") or ""
  line = f"# {document['objective']} {best['median']:.4g} {unit}{_bounds(best['low'], best['high'])}"
  if best.get("options") == best.get("reference"):
    line += ", the suite's reference itself"
  elif best.get("ratio_to_reference") is not None:
    reference = ", ".join(f"{k}={v}" for k, v in (best.get("reference") or {}).items())
    line += (f", {best['ratio_to_reference']:.3g}x{_bounds(best['ratio_low'], best['ratio_high'])} the reference"
             f" ({reference})")  # fmt: skip
  console.print(markup_text(line), highlight=False, soft_wrap=True)
  statuses = collections.Counter(c["status"] for c in document["candidates"])
  console.print(markup_text(
      f"# raced {sum(statuses.values()) - statuses.get('not sampled', 0)} of {document['grid_cells']} cells"
      f" ({', '.join(f'{n} {s}' for s, n in statuses.items())}); stopped: {document['stopped']};"
      f" {document['runs_measured']} runs measured where the whole grid needs {document['grid_runs_at_same_repeats']}"
      f" at the best's {document['best_rounds']} rounds; {path}"), highlight=False, soft_wrap=True)  # fmt: skip
  for kept in best.get("constraints", ()):
    if not kept["within_limit"]:
      console.print(markup_text(f"# {kept['constraint']}: the best's mean {kept['mean']} is past the limit, not decided"
                           " (its interval still reaches within)"), highlight=False, soft_wrap=True)  # fmt: skip
  undecided = [c["name"] for c in document["candidates"] if c["status"] == "surviving"]
  if undecided:
    console.print(markup_text(f"# the best so far, not decided against {len(undecided)}: {'; '.join(undecided)}"
                         " (--time_budget gives the race more)"),
                  highlight=False, soft_wrap=True)  # fmt: skip


def _no_answer(document: Mapping[str, Any]) -> str:
  if document.get("interrupted"):
    return "the race was interrupted"
  return "no candidate was left (each broke a constraint or failed)"
