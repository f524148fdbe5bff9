"""Orbax 0.12.8's `simdevice:` block: read as Orbax's runner reads it, run on simulated CPU devices
in as many local processes, said in plan and results, recorded as an emulated backend."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli, timed_records

import ckptbench
from ckptbench.cli import main
from ckptbench.config import load_suite_text, read_simdevice
from ckptbench.errors import ConfigError, CkptbenchError

SUITE = """\
suite_name: simdevice-tiny
num_repeats: 2
simdevice:
  device_type: v6e
  topology: [2, 2, 1]
  num_processes: 2
  fabricated_fill_seed: 7
checkpoint_config:
  spec:
    params: {dtype: float32, shape: [64, 32], sharding: [fsdp]}
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 4}}
benchmarks:
  - generator: save_restore
    options: {use_ocdbt: true}
"""


@pytest.fixture
def suite_file(tmp_path):
  path = tmp_path / "simdevice.yaml"
  path.write_text(SUITE)
  return path


def test_the_block_is_read_as_orbax_reads_it(suite_file):
  simdevice = read_simdevice(suite_file)
  assert (simdevice.device_type, simdevice.topology, simdevice.num_processes) == ("v6e", (2, 2, 1), 2)
  assert simdevice.num_devices == 4 and simdevice.fabricated_fill_seed == 7
  suite = load_suite_text(SUITE)
  assert suite.devices_needed == 4  # the topology's chips, whatever the meshes need
  assert any("real data" in note and "this machine's" in note for note in suite.notes)
  assert any("fabricated_fill_seed 7: not used" in note for note in suite.notes)


@pytest.mark.parametrize(
    ("old", "new", "line", "key", "message"),
    [
        ("topology: [2, 2, 1]", "topology: [2, 2]", 5, "simdevice.topology", "three chip counts"),
        ("num_processes: 2", "num_processes: 3", 6, "simdevice.num_processes", "4 chips do not split evenly"),
        ("num_processes: 2", "num_procesess: 2", 6, "simdevice.num_procesess", "did you mean 'num_processes'"),
        ("fabricated_fill_seed: 7", "fabricated_fill_seed: -1", 7, "simdevice.fabricated_fill_seed", "0"),
        ("  device_type: v6e\n", "", 3, "simdevice", "required key 'device_type'"),
        ("fsdp: 4}", "fsdp: 8}", 11, "mesh_config", "needs 8 devices; simdevice.topology has 4 chips"),
    ],
)
def test_each_problem_names_file_line_and_key(suite_file, old, new, line, key, message):
  suite_file.write_text(SUITE.replace(old, new))
  with pytest.raises(ConfigError) as error:
    ckptbench.load_suite(suite_file)
  assert (error.value.file, error.value.line, error.value.key) == (str(suite_file), line, key)
  assert message in error.value.message


def test_plan_shows_the_emulated_cluster(suite_file, capsys):
  assert main(["plan", str(suite_file)]) == 0
  out = capsys.readouterr().out
  assert "runs on 4 devices" in out
  assert "note: simdevice: tpu v6e 2x2x1 (4 chips) runs as 4 simulated CPU devices in 2 local" in out


def test_a_run_on_another_cluster_is_refused(suite_file, tmp_path):
  settings = ckptbench.RunSettings(output_dir=tmp_path / "out")
  with pytest.raises(CkptbenchError, match="runs as 2 processes, which `ckptbench run FILE -o OUT` starts"):
    ckptbench.run(suite_file, settings)  # one process, from Python
  one = tmp_path / "one.yaml"
  one.write_text(SUITE.replace("num_processes: 2", "num_processes: 1"))
  with pytest.raises(CkptbenchError, match="--devices 8 contradicts the suite's simdevice.topology"):
    ckptbench.run(one, ckptbench.RunSettings(output_dir=tmp_path / "out", devices=8))
  assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_the_simdevice_suite_runs_as_its_processes_and_records_an_emulated_backend(suite_file, tmp_path):
  out = tmp_path / "out"
  done = run_cli("run", str(suite_file), "-o", str(out), "--no-progress", "--no-views", "--no-probe")
  assert done.returncode == 0, done.stdout + done.stderr
  assert "simdevice tpu v6e 2x2x1: 2 local processes x 2 CPU devices" in done.stdout
  assert "[launch] all 2 processes succeeded" in done.stdout
  assert "unlike SimDevice, the arrays hold real data" in done.stdout + done.stderr  # said on the console
  manifest = json.loads((out / "manifest.json").read_text())
  assert manifest["backend"] == "cpu (emulating tpu v6e 2x2x1, 2 processes)"
  assert (manifest["process_count"], manifest["device_count"], manifest["local_device_count"]) == (2, 4, 2)
  summary = json.loads((out / "summary.json").read_text())
  assert any("unlike SimDevice" in note for note in summary["notes"])
  records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  measured = timed_records(out)
  assert sorted((r["repeat"], r["host"]) for r in measured) == [(0, 0), (0, 1), (1, 0), (1, 1)]
  assert all(r["error"] is None and r["metrics"]["save_0_basics/time_s"]["value"] > 0 for r in records)
