"""The tag tables are complete, consistent, and docs/metrics.md is generated from them."""

from __future__ import annotations

import pathlib

from ckptbench.api import _tag_table, _tags
from ckptbench.metrics import _jax_events
from ckptbench.metrics._reference import HAND_WRITTEN, render, with_generated_part

REPO = pathlib.Path(__file__).resolve().parent.parent
EVENTS_SEEN = REPO / "tests" / "data" / "orbax-0.12.8-jax-monitoring-events.txt"


def _seen() -> list[tuple[str, str]]:
  lines = EVENTS_SEEN.read_text().splitlines()
  return [tuple(line.split(" ", 1)) for line in lines if line and not line.startswith("#")]


def test_docs_metrics_md_is_generated_from_the_tables():
  committed = (REPO / "docs" / "metrics.md").read_text()
  assert committed == with_generated_part(committed), (
      "docs/metrics.md is out of date; regenerate it with `python -m ckptbench.metrics._reference --docs`"
  )
  # The hand-written part (the calibration table) follows the generated one and survives it.
  assert committed.startswith(render()) and HAND_WRITTEN in committed
  assert with_generated_part("stale\n" + HAND_WRITTEN + "\n## Kept\n") == render() + "\n" + HAND_WRITTEN + "\n## Kept\n"


def test_every_event_orbax_emits_is_mapped_or_ignored_with_a_reason():
  seen = _seen()
  assert len({name for _, name in seen}) == 82
  # Time spans repeat the durations; the collector does not listen to them.
  missing = [(k, n) for k, n in seen if k != "span" and (k, n) not in _jax_events.EVENTS]
  assert not missing


def test_every_tag_the_tables_name_is_registered():
  named = {a.tag for a in _jax_events.EVENTS.values() if isinstance(a, (_jax_events.Tag, _jax_events.Pair)) and a.tag}
  named |= {t for pair in _jax_events.PAIRS.values() for t in pair}
  for tag, d in _tag_table.DERIVED.items():
    named |= {tag, d.numerator, *d.denominators}
  assert named - set(_tag_table.TAGS) == set()
  for tag, spec in _tag_table.TAGS.items():
    assert tag.split("/")[0] in _tag_table.NAMESPACES, tag
    if tag.startswith("4_throughput/"):
      assert spec.unit == "GiB/s", tag
    if tag.endswith("_gb"):
      assert spec.unit == "GiB", tag


def test_unmapped_events_land_in_9_other_with_a_registered_unit():
  from ckptbench.metrics._jax_monitoring import summarize

  out = summarize([("duration", "/jax/orbax/write/new_stage_secs", 0.5),
                   ("duration", "/jax/orbax/write/new_stage_secs", 0.25),
                   ("event", "/jax/orbax/new_thing", 1.0),
                   ("scalar", "/jax/orbax/new_gauge", 3.0)])  # fmt: skip
  assert out["9_other/orbax_write_new_stage_secs_s"].value == 0.75
  assert out["9_other/orbax_new_thing_count"].value == 1
  assert out["9_other/orbax_new_gauge"].value == 3.0
  for tag, value in out.items():
    assert _tag_table.unit_of(tag) == value.unit


def test_tags_split_with_underscores_and_digits_in_the_operation():
  assert _tags.Tag.parse("step_1_0_basics/time_s") == _tags.Tag("step_1", "0_basics", "time_s")
  parsed = _tags.Tag.parse("save_blocking_4_throughput/save_blocking_gbps")
  assert (parsed.op, parsed.key) == ("save_blocking", "4_throughput/save_blocking_gbps")
  assert parsed.full == "save_blocking_4_throughput/save_blocking_gbps"
  assert _tags.Tag.parse("no_namespace") == _tags.Tag("", "", "no_namespace")
