"""Every table names a level the same short way (api/_levels.py): a checkpoint config or mesh by the `name:`
the suite gave it, else by what differs between the levels; never its whole text, never two rows alike."""

from __future__ import annotations

import io
import textwrap

from rich.console import Console

from ckptbench.api import level_labels, variant_labels
from ckptbench.config import load_suite_text
from ckptbench.engine import describe_plan
from ckptbench.engine._settings import RunSettings
from ckptbench.engine.loop._runner import run_suite
from ckptbench.views import print_suite_tables
from ckptbench.views._effects_view import effects_section

STACKED = {"spec": {"layers": {"dtype": "float32", "shape": [16, 8, 8]}}, "fill": "normal", "random_seed": 0}
ARRAYS = {"spec": {f"layer_{i:02}": {"dtype": "float32", "shape": [8, 8]} for i in range(16)}, "fill": "normal",
          "random_seed": 0}  # fmt: skip


def test_configs_are_named_by_what_differs_between_them():
  assert level_labels([STACKED, ARRAYS, STACKED]) == ["spec: layers float32[16,8,8]", "spec: 16 arrays",
                                                      "spec: layers float32[16,8,8]"]  # fmt: skip
  assert level_labels([{**STACKED, "fill": "zeros"}, STACKED]) == ["fill: zeros", "fill: normal"]


def test_a_name_the_suite_gives_is_the_label():
  assert level_labels([{**STACKED, "name": "stacked"}, ARRAYS]) == ["stacked", "spec: 16 arrays"]


def test_meshes_are_named_by_their_axes():
  meshes = [{"mesh_axes": ["fsdp"], "ici_parallelism": {"fsdp": 4}},
            {"mesh_axes": ["fsdp", "tensor"], "ici_parallelism": {"fsdp": 2, "tensor": 2}}]  # fmt: skip
  assert level_labels(meshes) == ["fsdp4", "fsdp2xtensor2"]


def test_no_two_different_levels_read_alike():
  many = [{"a": i, "b": i, "c": i} for i in range(3)]  # differences past what a label shows
  labels = level_labels(many)
  assert len(set(labels)) == 3 and all(len(label) < 40 for label in labels)
  assert variant_labels([({"use_ocdbt": True}, None, STACKED), ({"use_ocdbt": True}, None, ARRAYS)]) == [
      "use_ocdbt=True, spec: layers float32[16,8,8]", "use_ocdbt=True, spec: 16 arrays"]  # fmt: skip


def test_options_are_said_as_the_suite_writes_them():
  assert variant_labels([({"save_concurrent_gb": 1.0}, None, None), ({"save_concurrent_gb": 0.5}, None, None)]) == [
      "save_concurrent_gb=1", "save_concurrent_gb=0.5"]  # fmt: skip


SUITE = textwrap.dedent("""\
    suite_name: two checkpoint configs
    num_repeats: 4
    interleave_repeats: true
    checkpoint_configs:
      - {spec: {layers: {dtype: float32, shape: [16, 8, 8], sharding: [null, fsdp]}}}
      - {spec: {%s}}
    mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 8}}
    benchmarks:
      - generator: planted_effects_benchmarks.PlantedSleepBenchmark
        options: {use_ocdbt: [false, true]}
    """) % ", ".join(f"layer_{i:02}: {{dtype: float32, shape: [8, 8], sharding: [fsdp]}}" for i in range(16))


def test_a_sweep_over_two_checkpoint_configs_names_each_in_one_short_line(tmp_path):
  suite = load_suite_text(SUITE, str(tmp_path / "s.yaml"))
  names = [row["name"] for row in describe_plan(suite, 8)["benchmarks"]]
  assert "PlantedSleepBenchmark(use_ocdbt=False, spec: 16 arrays)" in names and not any("ckpt=" in n for n in names)
  outcome = run_suite(suite, RunSettings(output_dir=tmp_path / "out", show_progress=False, probe_storage=False,
                                         write_views=False, host_memory="off", flush_between_runs=False))  # fmt: skip
  console = Console(file=io.StringIO(), width=200)
  print_suite_tables(outcome.summary, console=console, records=outcome.records)
  text = console.file.getvalue()
  lines = text.splitlines()
  assert any("checkpoint_config=spec: 16 arrays vs spec: layers float32[16,8,8]" in line for line in lines), text
  assert "use_ocdbt=True, spec: 16 arrays" in text  # the verdict table's rows
  assert "ckpt=" not in text and "fill=" not in text and "layer_00" not in text
  assert max(map(len, lines)) <= 200
  page = effects_section(outcome.summary)
  assert "checkpoint_config=spec: 16 arrays vs spec: layers float32[16,8,8]" in page and "layer_00" not in page
