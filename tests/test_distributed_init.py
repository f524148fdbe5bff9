"""Starting jax.distributed from the JAX_* variables, JAX's cluster detection, and Pathways."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import subprocess
import sys

import pytest
from conftest import REPO

from ckptbench.distributed import (
    DistributedTimeouts,
    check_colocated_python_supported,
    initialize,
    is_pathways_backend,
    pathways_load_context,
)
from ckptbench.distributed._init import read_distributed_env
from ckptbench.distributed._launcher import free_port
from ckptbench.errors import CkptbenchError


@pytest.mark.parametrize(
    "address, port, expected",
    [
        ("10.0.0.1", "1234", "10.0.0.1:1234"),
        ("10.0.0.1:99", None, "10.0.0.1:99"),
        ("10.0.0.1:99", "99", "10.0.0.1:99"),
        ("head-node", None, "head-node:8476"),
        ("[fd00::1]:7", None, "[fd00::1]:7"),
        ("fd00::1", "7", "[fd00::1]:7"),
    ],
)
def test_the_coordinator_port_comes_from_the_address_or_jax_coordinator_port(address, port, expected):
  env = {"JAX_COORDINATOR_ADDRESS": address, "JAX_NUM_PROCESSES": "2", "JAX_PROCESS_ID": "0"}
  if port:
    env["JAX_COORDINATOR_PORT"] = port
  asked = read_distributed_env(env)
  assert (asked.coordinator_address, asked.num_processes, asked.process_id) == (expected, 2, 0)


@pytest.mark.parametrize(
    "env, message",
    [
        ({"JAX_COORDINATOR_ADDRESS": "h:1", "JAX_COORDINATOR_PORT": "2"}, "give the port once"),
        ({"JAX_COORDINATOR_ADDRESS": "h:port"}, "is not a number"),
        ({"JAX_NUM_PROCESSES": "two"}, "JAX_NUM_PROCESSES='two' is not an integer"),
        ({"JAX_NUM_PROCESSES": "0"}, "must be at least 1"),
        ({"JAX_NUM_PROCESSES": "2", "JAX_PROCESS_ID": "2"}, "JAX_PROCESS_ID=2 is out of range"),
    ],
)
def test_malformed_variables_are_errors(env, message):
  with pytest.raises(CkptbenchError, match=message):
    read_distributed_env(env)


def test_single_process_unless_asked():
  assert initialize("env", env={}) == "single"
  assert initialize("env", env={"JAX_NUM_PROCESSES": "1"}) == "single"
  assert initialize("off", env={"JAX_NUM_PROCESSES": "4", "JAX_COORDINATOR_ADDRESS": "h"}) == "single"
  with pytest.raises(CkptbenchError, match="possible values are"):
    initialize("always")


def test_timeouts_can_be_shortened_from_the_environment():
  assert DistributedTimeouts.from_env({"CKPTBENCH_HEARTBEAT_TIMEOUT_S": "10"}) == DistributedTimeouts(heartbeat_s=10)
  with pytest.raises(CkptbenchError, match="CKPTBENCH_INIT_TIMEOUT_S"):
    DistributedTimeouts.from_env({"CKPTBENCH_INIT_TIMEOUT_S": "soon"})


_AUTO_SCRIPT = """
from ckptbench.distributed import initialize, make_coordinator
print(initialize("auto"), flush=True)
c = make_coordinator()
gathered = c.allgather_json({"host": c.process_index, "text": "é" * (300 * c.process_index + 1)})
c.barrier("done")
print(c.process_index, c.process_count, [(g["host"], len(g["text"])) for g in gathered])
"""


@pytest.mark.slow
def test_auto_mode_lets_jax_detect_slurm_and_honours_jax_coordinator_port():
  port = str(free_port())
  procs = []
  for i in range(2):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "JAX_", "XLA_FLAGS"))}
    env.update(
        PYTHONPATH=str(REPO / "src"), JAX_PLATFORMS="cpu", JAX_COORDINATOR_PORT=port,
        SLURM_JOB_ID="7", SLURM_STEP_NODELIST="localhost", SLURM_NTASKS="2",
        SLURM_PROCID=str(i), SLURM_LOCALID=str(i),
    )  # fmt: skip
    procs.append(subprocess.Popen([sys.executable, "-c", _AUTO_SCRIPT], env=env, stdout=subprocess.PIPE, text=True))
  outputs = [p.communicate(timeout=60)[0].split("\n") for p in procs]
  assert [p.returncode for p in procs] == [0, 0]
  for i, lines in enumerate(outputs):
    assert lines[0] == "jax"
    assert lines[-2] == f"{i} 2 [(0, 1), (1, 301)]"


def test_colocated_python_needs_pathways():
  if is_pathways_backend():
    pytest.skip("the Pathways backend is in use here")
  with pytest.raises(CkptbenchError, match="load_with_colocated_python: true needs the Pathways backend"):
    check_colocated_python_supported()
  assert isinstance(pathways_load_context(True), contextlib.nullcontext)  # Orbax's defaults stay


@pytest.mark.skipif(importlib.util.find_spec("pathwaysutils") is None, reason="pathwaysutils is not installed")
def test_pathways_is_initialised_instead_of_jax_distributed():
  if not is_pathways_backend():
    pytest.skip("pathwaysutils is installed but the Pathways backend is not in use (JAX_PLATFORMS=proxy)")
  assert initialize("env") == "pathways"
  check_colocated_python_supported()
  assert pathways_load_context(True).pathways_options.checkpointing_impl.name == "COLOCATED_PYTHON"
