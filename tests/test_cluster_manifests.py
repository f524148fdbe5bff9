"""`ckptbench launch --emit`: the JobSet manifest and the sbatch script it writes."""

from __future__ import annotations

import os
import pathlib
import stat
import subprocess

import pytest
import yaml

from ckptbench.cli._main import main

_RUN = ["suite.yaml", "-o", "/shared/out dir", "--resume"]
# What each host runs: the suite file's path made absolute (the hosts do not start in this directory).
_EMITTED = [str(pathlib.Path("suite.yaml").resolve()), *_RUN[1:]]

# The parts of the JobSet v1alpha2 / batch/v1 Job / core/v1 Pod schemas that the manifest uses.
_STR, _INT, _BOOL = str, int, bool
_JOBSET_SCHEMA = {
    "apiVersion": _STR, "kind": _STR, "metadata": {"name": _STR, "labels": {"app.kubernetes.io/name": _STR}},
    "spec": {
        "network": {"enableDNSHostnames": _BOOL},
        "failurePolicy": {"maxRestarts": _INT},
        "replicatedJobs": [{
            "name": _STR, "replicas": _INT,
            "template": {"spec": {
                "parallelism": _INT, "completions": _INT, "completionMode": _STR, "backoffLimit": _INT,
                "template": {"spec": {"restartPolicy": _STR, "containers": [{
                    "name": _STR, "image": _STR, "command": [_STR],
                    "env": [{"name": _STR, "value": _STR, "valueFrom": {"fieldRef": {"fieldPath": _STR}}}],
                    "ports": [{"containerPort": _INT, "name": _STR}],
                    "resources": {"limits": {"google.com/tpu": _INT, "nvidia.com/gpu": _INT}},
                }]}},
            }},
        }],
    },
}  # fmt: skip
_REQUIRED = {"apiVersion", "kind", "metadata", "spec", "name", "replicatedJobs", "template", "containers", "image"}


def _check(value, schema, where="$"):
  """Checks `value` against `schema`: dicts list their known keys, lists give the item schema."""
  if isinstance(schema, dict):
    assert isinstance(value, dict), where
    assert not set(value) - set(schema), f"{where}: unknown keys {set(value) - set(schema)}"
    assert not (_REQUIRED & set(schema)) - set(value), f"{where}: missing {(_REQUIRED & set(schema)) - set(value)}"
    for key, item in value.items():
      _check(item, schema[key], f"{where}.{key}")
  elif isinstance(schema, list):
    assert isinstance(value, list) and value, where
    for i, item in enumerate(value):
      _check(item, schema[0], f"{where}[{i}]")
  else:
    assert type(value) is schema, f"{where}: {value!r} is not {schema.__name__}"


def _emit(tmp_path, kind, *extra) -> pathlib.Path:
  target = tmp_path / f"{kind}.out"
  code = main(["launch", "-n", "4", "--emit", kind, "--emit_to", str(target), *extra, *_RUN])
  assert code == 0
  return target


def test_jobset_manifest_runs_the_suite_on_every_pod(tmp_path):
  path = _emit(tmp_path, "k8s-jobset", "--image", "ghcr.io/acme/ckptbench:1", "--devices_per_process", "8")
  doc = yaml.safe_load(path.read_text())
  _check(doc, _JOBSET_SCHEMA)
  assert (doc["apiVersion"], doc["kind"]) == ("jobset.x-k8s.io/v1alpha2", "JobSet")
  job = doc["spec"]["replicatedJobs"][0]["template"]["spec"]
  assert job["parallelism"] == job["completions"] == 4 and job["completionMode"] == "Indexed"
  container = job["template"]["spec"]["containers"][0]
  assert container["image"] == "ghcr.io/acme/ckptbench:1"
  assert container["command"] == ["python", "-m", "ckptbench", "run", *_EMITTED]
  env = {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}
  assert env["JAX_COORDINATOR_ADDRESS"] == "ckptbench-workers-0-0.ckptbench"
  assert env["JAX_COORDINATOR_PORT"] == "8476" and env["JAX_NUM_PROCESSES"] == "4"
  assert "job-completion-index" in env["JAX_PROCESS_ID"]["fieldRef"]["fieldPath"]
  assert env["XLA_FLAGS"] == "--xla_force_host_platform_device_count=8"


def test_jobset_requests_accelerators_and_needs_an_image(tmp_path, capsys):
  path = _emit(tmp_path, "k8s-jobset", "--image", "img", "--accelerator", "tpu", "--devices_per_process", "4",
               "--name", "ckpt-tpu", "--port", "1234")  # fmt: skip
  doc = yaml.safe_load(path.read_text())
  _check(doc, _JOBSET_SCHEMA)
  container = doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
  assert container["resources"] == {"limits": {"google.com/tpu": 4}}
  env = {e["name"]: e.get("value") for e in container["env"]}
  assert env["JAX_COORDINATOR_ADDRESS"] == "ckpt-tpu-workers-0-0.ckpt-tpu" and env["JAX_COORDINATOR_PORT"] == "1234"
  assert "XLA_FLAGS" not in env
  assert main(["launch", "-n", "2", "--emit", "k8s-jobset", *_RUN]) == 2
  assert "--image" in capsys.readouterr().err


def test_slurm_script_is_valid_bash_and_starts_one_process_per_task(tmp_path):
  script = _emit(tmp_path, "slurm", "--devices_per_process", "2")
  subprocess.run(["bash", "-n", str(script)], check=True)
  # Run it against stand-ins for scontrol, srun (4 tasks) and python that print what they receive.
  bin_dir = tmp_path / "bin"
  bin_dir.mkdir()
  fakes = {
      "scontrol": 'printf "node-a\\nnode-b\\n"',
      "srun": 'while [[ "$1" == --* ]]; do shift; done\n'
              'for i in 0 1 2 3; do SLURM_PROCID=$i "$@" || exit 1; done',
      "python": 'echo "$JAX_PROCESS_ID|$JAX_COORDINATOR_ADDRESS|$JAX_COORDINATOR_PORT|$JAX_NUM_PROCESSES|$XLA_FLAGS|$*"',
  }  # fmt: skip
  for name, body in fakes.items():
    (bin_dir / name).write_text(f"#!/bin/bash\n{body}\n")
    (bin_dir / name).chmod(stat.S_IRWXU)
  env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SLURM_JOB_NODELIST": "node-[a-b]"}
  lines = subprocess.run(["bash", str(script)], env=env, check=True, capture_output=True, text=True).stdout.split("\n")
  expected = "|node-a|8476|4|--xla_force_host_platform_device_count=2|-m ckptbench run " + " ".join(_EMITTED)
  assert lines[:4] == [f"{i}{expected}" for i in range(4)]


@pytest.mark.parametrize("bad", [["--name", "Bad_Name"], ["--devices_per_process", "0"], ["-n", "0"]])
def test_bad_parameters_are_one_line_errors(tmp_path, capsys, bad):
  assert main(["launch", "-n", "2", "--emit", "slurm", "--emit_to", str(tmp_path / "x"), *bad, *_RUN]) == 2
  err = capsys.readouterr().err.strip()
  assert err.startswith("ckptbench: error:") and "\n" not in err
