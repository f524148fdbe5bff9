"""compat.orbax's markdown_cards: the TensorBoard text cards of Orbax's metrics manager."""

from __future__ import annotations

import dataclasses

from ckptbench.compat.orbax.core import inventory, markdown_cards, metrics_manager, run_manifest

_GIB = 1024**3
_LOAD = {
    "3_load_breakdown/total_s": {"mean": 13.0, "max": 13.5},
    "4_throughput/load_total_gbps": {"mean": 11.0, "max": 11.3},
    "6_tensorstore/tensorstore_kvstore_file_bytes_read_value_diff": {"mean": 8.75 * _GIB, "max": 8.8 * _GIB},
}
_PER_HOST = [
    (0, {"6_tensorstore/tensorstore_kvstore_file_bytes_read_value_diff": 8.7 * _GIB,
         "6_tensorstore/tensorstore_kvstore_file_read_value_diff": 6, "3_load_breakdown/total_s": 12.9}),
    (1, {"6_tensorstore/tensorstore_kvstore_file_bytes_read_value_diff": 8.8 * _GIB,
         "6_tensorstore/tensorstore_kvstore_file_read_value_diff": 7, "3_load_breakdown/total_s": 13.1}),
]  # fmt: skip
_INVENTORY = inventory.CheckpointInventory(
    total_bytes=140 * _GIB, file_count=4096, small_file_count=128, small_file_pct=0.031,
    largest_file_bytes=64 * 1024**2, smallest_file_bytes=32, format={"ocdbt": 4090, "metadata": 6},
)  # fmt: skip


def test_the_glance_card_has_the_headline_each_host_share_the_inventory_and_manifest():
  manifest = run_manifest.RunManifest("2026-05-25T20:00:00+00:00", "h", "abc123", False, "0.10", "0.12", "0.1", 2, 0,
                                      8, "cpu", "", "")  # fmt: skip
  card = markdown_cards.render_glance_card("llama", _LOAD, _PER_HOST, _INVENTORY, manifest)
  assert card.startswith("## llama — at a glance\n")
  for row in ("| Total time | 13.50 s |", "| Throughput | 11.30 GiB/s |", "| Bytes / host (mean) | 8.75 GiB |",
              "| Checkpoint size (on-disk) | 140.00 GiB |", "| host | bytes | reads/writes | total s | % of total |",
              "| 0 | 8.70 GiB | 6 | 12.90 | 6.2% |", "| 1 | 8.80 GiB | 7 | 13.10 | 6.3% |",
              "| file count | 4,096 |", "| small files <1 MiB | 3.1% ✓ |", "| format breakdown | metadata=6, ocdbt=4090 |",
              "## Run manifest", "| `git_sha` | `abc123` |"):  # fmt: skip
    assert row in card, row


def test_a_card_shows_what_it_has_sub_gib_sizes_in_mib_and_missing_figures_as_dashes():
  tags = {"6_io/file_bytes_read_per_host": {"mean": 0.5 * _GIB}}
  card = markdown_cards.render_glance_card("b", tags, [(0, {"6_io/file_bytes_read_per_host": 0.5 * _GIB})], None, None)
  assert "| Total time | — s |" in card and "| Bytes / host (mean) | 512.00 MiB |" in card
  assert "Throughput" not in card and "% of total" not in card and "Inventory" not in card
  empty = markdown_cards.render_glance_card("b", {}, [], None, None)
  assert empty == "## b — at a glance\n\n| metric | value |\n|---|---:|\n| Total time | — s |\n"


def test_configuration_aggregated_metrics_and_hparams():
  config = markdown_cards.render_configuration("bench", {"b": True, "a": 1}, {"spec": {"w": {"shape": [4]}}, "path": None})
  assert "### Benchmark options\n\n| field | value |\n|---|---|\n| `a` | `1` |\n| `b` | `True` |" in config
  assert "| `path` | `None` |" in config and "### Checkpoint config — `spec`\n\n```json" in config
  assert "Checkpoint config" not in markdown_cards.render_configuration("bench", {"a": 1}, None)
  stats = {"2_save_breakdown/blocking_s": metrics_manager.AggregatedStats(1.0, 0.1, 0.9, 1.1, 3), "plain": metrics_manager.AggregatedStats(2.0, 0.0, 2.0, 2.0, 1)}
  table = markdown_cards.render_aggregated_metrics("b", stats, {"2_save_breakdown/blocking_s": "s"}, host_label="host_3")
  assert table.splitlines()[0] == "## b — aggregated metrics — host_3"
  assert "### 2_save_breakdown" in table and "| `blocking_s` | 1.0000 | 0.1000 | 0.9000 | 1.1000 | 3 | s |" in table
  assert "### \\_other\\_" in table
  assert markdown_cards.render_aggregated_metrics("b", {}, {}) == "_No successful runs to aggregate._"

  @dataclasses.dataclass(frozen=True)
  class Options:
    enabled: bool = True
    size: int | None = None
    sizes: tuple = (1, 2)

  assert markdown_cards.options_to_hparams(Options()) == {"enabled": True, "size": "None", "sizes": "(1, 2)"}
  assert markdown_cards.options_to_hparams({"a": 1.5}) == {"a": 1.5}
  assert markdown_cards.options_to_hparams("text") == {} and markdown_cards.options_to_hparams(None) == {}


def test_names_keys_and_values_are_escaped():
  hostile = "a|b <script>x</script> `tick`"
  config = markdown_cards.render_configuration(hostile, {hostile: hostile}, {hostile: {"k": "``` <script>"}})
  assert config.startswith(r"## a\|b &lt;script\>x&lt;/script\> \`tick\`")
  assert "| `` a\\|b <script>x</script> `tick` `` | `` a\\|b <script>x</script> `tick` `` |" in config
  assert "```" not in config.split("```json", 1)[1].split("\n```", 1)[0]  # no fence ends the JSON block early
  stats = {"<i>/m|s": metrics_manager.AggregatedStats(1.0, 0.0, 1.0, 1.0, 1)}
  table = markdown_cards.render_aggregated_metrics(hostile, stats, {"<i>/m|s": "<b>"}, host_label=hostile)
  assert "<script>" not in table and "<i>" not in table and "<b>" not in table and "| `m\\|s` |" in table
  glance = markdown_cards.render_glance_card(hostile, _LOAD, _PER_HOST, _INVENTORY, None)
  assert "<script>" not in glance and "a|b" not in glance
