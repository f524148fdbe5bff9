"""libraries: the same sharded arrays through Orbax, TensorStore, array_serialization, safetensors and plain."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from rich.console import Console

import ckptbench
from builtin_support import corrupt_before, errors, ok_metrics, run_text
from ckptbench.benchmarks import _library_io
from ckptbench.benchmarks.libraries import LIBRARIES, LibrariesOptions
from ckptbench.views import print_suite_tables
from ckptbench.views._floor_view import floor_section
from ckptbench.views._report_html import FigureIds
from conftest import run_cli
from store_servers import s3_store  # noqa: F401  (fixture)

pytest.importorskip("safetensors", reason="the safetensors extra is not installed (pip install 'ckptbench[safetensors]')")

# A sharded bf16 array (8 shards of 8 x 32) and a replicated float32 one (written once: replica 0).
DATA = """\
suite_name: t
checkpoint_config:
  spec:
    w: {dtype: bfloat16, shape: [64, 32], sharding: [fsdp]}
    layer: {b: {dtype: float32, shape: [32]}}
  fill: random_bits
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 8}}
"""
CHECKPOINT_BYTES = 64 * 32 * 2 + 32 * 4


def test_every_library_saves_loads_and_verifies_the_same_arrays_and_each_gets_its_share_of_the_floor(tmp_path):
  outcome = run_text(tmp_path, DATA, """\
      num_repeats: 2
      floor: {library: plain}
      benchmarks:
        - generator: libraries
          options: {library: [orbax, tensorstore, array_serialization, safetensors, plain]}
      """)
  ok_metrics(outcome)
  by_library = {r.options["library"]: r.metrics for r in outcome.records}
  assert set(by_library) == set(LIBRARIES)
  for library, m in by_library.items():
    for op in ("save", "load", "verify"):
      assert m[f"{op}_0_basics/time_s"].value > 0, (library, op)
    assert m["save_5_inventory/save_total_gb"].value * 2**30 == pytest.approx(CHECKPOINT_BYTES), library
    assert m["save_4_throughput/save_total_gbps"].value > 0, library
    assert any(t.startswith("load_0_basics/cold_cache_") for t in m), library
  shares = outcome.summary.floor_shares
  assert {(s.variant["library"], s.metric) for s in shares} == {
      (library, f"{op}_0_basics/time_s") for library in LIBRARIES if library != "plain" for op in ("save", "load")
  }
  assert all(s.n == 2 and s.low <= s.share <= s.high and s.floor == {"library": "plain"} for s in shares)
  # The console and the report show them beside each library's time, throughput and host peak, and
  # where Orbax's save went (its jax.monitoring phases).
  console = Console(record=True, width=250)
  print_suite_tables(outcome.summary, console, records=outcome.records)
  text = console.export_text()
  assert "against the floor: library=plain" in text and "library=plain (floor)" in text
  assert "library=orbax save, Orbax's phases (median): serialization" in text and "TensorStore writes" in text
  html = floor_section(outcome.summary, FigureIds())
  assert "where the time went" in html and "share of floor" in html


def test_tensorstore_and_array_serialization_round_trip_under_ocdbt_and_compressed(tmp_path):
  outcome = run_text(tmp_path, DATA, """\
      keep_checkpoints: true
      benchmarks:
        - generator: libraries
          options: {library: [tensorstore, array_serialization], use_ocdbt: true}
        - generator: libraries
          options: {library: tensorstore, use_compression: true}
      """)
  ok_metrics(outcome)
  assert len(outcome.records) == 3
  assert len(list((tmp_path / "out").rglob("manifest.ocdbt"))) == 2  # one database each


def test_plain_writes_one_file_per_shard_and_replicated_arrays_once(tmp_path):
  outcome = run_text(tmp_path, DATA, """\
      keep_checkpoints: true
      benchmarks:
        - generator: libraries
          options: {library: plain}
      """)
  ok_metrics(outcome)
  root = pathlib.Path(outcome.records[0].path) / "plain"
  files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
  assert files == sorted(["layer/b/0"] + [f"w/{8 * i}_0" for i in range(8)])
  assert sum((root / f).stat().st_size for f in files) == CHECKPOINT_BYTES


def _flip_first_byte(files: list[pathlib.Path]) -> bool:
  for file in files:
    data = bytearray(file.read_bytes())
    data[0] ^= 0xFF
    file.write_bytes(bytes(data))
  return bool(files)


def _flip_last_byte(files: list[pathlib.Path]) -> bool:
  for file in files:
    data = bytearray(file.read_bytes())
    data[-1] ^= 0xFF  # the last byte of the tensor data (a safetensors header comes first)
    file.write_bytes(bytes(data))
  return bool(files)


_CORRUPTIONS = {  # library: what flips a byte of its files on disk, found below the run directories
    "plain": lambda out: _flip_first_byte([p for p in out.rglob("plain/w/*") if p.is_file()][:1]),
    "safetensors": lambda out: _flip_last_byte(list(out.rglob("*.safetensors"))),
    # zarr3 chunks without a codec: the file is the shard's bytes (`c/<i>/<j>`).
    "tensorstore": lambda out: _flip_first_byte([p for p in out.rglob("tensorstore/w/c/*/*") if p.is_file()][:1]),
}


@pytest.mark.parametrize("library", sorted(_CORRUPTIONS))
def test_a_byte_flipped_on_disk_after_the_save_fails_the_check(tmp_path, library):
  # Measured blocks: save, then load (the 2nd): the damage lands between them.
  with corrupt_before(2, lambda: _CORRUPTIONS[library](tmp_path / "out")):
    outcome = run_text(tmp_path, DATA, f"""\
        benchmarks:
          - generator: libraries
            options: {{library: {library}}}
        """)
  [(kind, message)] = errors(outcome)
  assert kind == "DataMismatchError" and f"library={library}" in message and "w (" in message, message


def test_options_that_do_not_apply_are_refused_with_the_reason():
  assert LibrariesOptions(library="zip").invalid_reason() == (
      "library must be one of orbax, tensorstore, array_serialization, safetensors, plain"
  )
  assert LibrariesOptions(library="plain", use_ocdbt=True).invalid_reason() == (
      "use_ocdbt applies to library orbax, tensorstore, array_serialization, not plain"
  )
  assert LibrariesOptions(library="array_serialization", use_compression=False).invalid_reason() == (
      "use_compression applies to library orbax, tensorstore, not array_serialization"
  )
  for library in LIBRARIES:  # each runs here
    assert LibrariesOptions(library=library).is_valid() and LibrariesOptions(library=library).unsupported_reason() is None


def test_where_a_library_cannot_write_it_is_refused_with_the_reason():
  assert ckptbench.orbax_write_problem("s3://ckptbench/x") == (
      "orbax-checkpoint cannot write s3:// (it would put the array data in a local 's3:' directory);"
      " it writes local paths and gs://"
  )
  assert ckptbench.orbax_write_problem("gs://ckptbench/x") is None
  assert ckptbench.orbax_write_problem("/tmp/x") is None
  assert _library_io.array_serialization_problem() is None  # the installed JAX has it


def test_a_plain_file_that_is_not_its_shards_size_is_a_mismatch(tmp_path):
  (tmp_path / "short").write_bytes(b"x" * 15)
  with pytest.raises(ckptbench.DataMismatchError, match="15 bytes, the shard has 16"):
    _library_io._read_file(tmp_path / "short", np.dtype("float32"), (4,))
  (tmp_path / "long").write_bytes(b"x" * 17)
  with pytest.raises(ckptbench.DataMismatchError, match="17 bytes, the shard has 16"):
    _library_io._read_file(tmp_path / "long", np.dtype("float32"), (4,))


def test_leaves_that_are_not_arrays_are_refused_naming_the_leaf(tmp_path):
  outcome = run_text(tmp_path, """\
      suite_name: t
      checkpoint_config: {spec: {w: {dtype: float32, shape: [8]}, step: int}}
      benchmarks: [{generator: libraries, options: {library: plain}}]
      """)
  [(kind, message)] = errors(outcome)
  assert kind == "CkptbenchError" and "leaf 'step' is a int" in message, message


@pytest.mark.slow
def test_on_s3_the_libraries_that_can_write_there_do_and_the_others_are_refused(s3_store, tmp_path):
  (tmp_path / "s.yaml").write_text(DATA + """\
num_repeats: 1
num_warmups: 0  # what is checked is where each library writes or why it cannot, not its timing
benchmarks:
  - generator: libraries
    options: {library: [orbax, tensorstore, array_serialization, safetensors, plain]}
""")
  out = tmp_path / "out"
  done = run_cli("run", str(tmp_path / "s.yaml"), "-o", str(out), "--checkpoint_root", f"{s3_store.url}/libraries",
                 "--no-views", "--no-probe", "--no-progress", "--host_memory", "off", timeout=240)  # fmt: skip
  assert done.returncode == 1, done.stderr[-3000:]  # the refused libraries' runs failed
  by_library = {r["options"]["library"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())
                if not r["warmup"]}  # fmt: skip
  for library in ("tensorstore", "array_serialization", "plain"):
    record = by_library[library]
    assert record["error"] is None and record["path"].startswith("s3://ckptbench/libraries/"), (library, record["error"])
    assert record["metrics"]["load_0_basics/cold_cache_object_store"]["value"] == 1
  assert "orbax-checkpoint cannot write s3://" in by_library["orbax"]["error"]["message"]
  assert "safetensors writes local files only" in by_library["safetensors"]["error"]["message"]


@pytest.mark.slow
def test_two_processes_each_write_their_shards_and_load_them_back(tmp_path):
  suite = tmp_path / "suite.yaml"
  suite.write_text(DATA + """\
num_repeats: 1
keep_checkpoints: true
benchmarks:
  - generator: libraries
    options: {library: [tensorstore, safetensors, plain]}
""")
  out = tmp_path / "out"
  done = run_cli("launch", "-n", "2", str(suite), "-o", str(out), "--no-progress", "--no-views", "--no-probe", timeout=240)
  assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
  records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  timed = [r for r in records if not r["warmup"]]
  assert sorted((r["options"]["library"], r["host"]) for r in timed) == [
      (library, host) for library in ("plain", "safetensors", "tensorstore") for host in (0, 1)
  ]
  assert not any(r["error"] for r in records)
  # Each process wrote a file of its own shards (the replicated array once, by process 0).
  assert {p.name for p in out.rglob("process_*.safetensors")} == {"process_00000.safetensors", "process_00001.safetensors"}
