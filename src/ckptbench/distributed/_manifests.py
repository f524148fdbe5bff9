"""Cluster launch files: a Kubernetes JobSet manifest and a SLURM sbatch script.

Both start `ckptbench run` once per host with the JAX_* variables that
`initialize("env")` reads: process 0's host is the coordinator, every host
learns its index from the cluster (the Job completion index on Kubernetes,
`SLURM_PROCID` on SLURM). The suite file and the output directory must be
reachable from every host under the same path (a shared filesystem or bucket).
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from typing import Literal


from ckptbench.distributed._choices import ACCELERATORS, MANIFEST_KINDS
from ckptbench.distributed._init import DEFAULT_COORDINATOR_PORT
from ckptbench.errors import CkptbenchError

Accelerator = Literal["cpu", "gpu", "tpu"]
ManifestKind = Literal["k8s-jobset", "slurm"]

_K8S_RESOURCE = {"gpu": "nvidia.com/gpu", "tpu": "google.com/tpu"}
_DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")
_JOB = "workers"


@dataclasses.dataclass(frozen=True)
class ClusterJob:
  """What runs where.

  Attributes:
    num_hosts: processes, one per host.
    run_args: the arguments of `ckptbench run` (suite file, `-o OUT`, options).
    image: the container image (required for Kubernetes; on SLURM it is
      passed to `srun --container-image`, which needs the pyxis plugin).
    command: the program that starts ckptbench on a host.
    devices_per_host: accelerators per host (GPU/TPU: requested from the
      scheduler; CPU: simulated devices through XLA_FLAGS); None leaves it
      to the cluster.
    accelerator: "cpu", "gpu" or "tpu".
    name: the job name (a DNS label: lowercase letters, digits, "-").
    port: the coordinator's port on process 0's host.
  """

  num_hosts: int
  run_args: tuple[str, ...]
  image: str | None = None
  command: tuple[str, ...] = ("python", "-m", "ckptbench")
  devices_per_host: int | None = None
  accelerator: Accelerator = "cpu"
  name: str = "ckptbench"
  port: int = DEFAULT_COORDINATOR_PORT

  def __post_init__(self):
    problems = []
    if self.num_hosts < 1:
      problems.append(f"the host count must be at least 1, got {self.num_hosts}")
    if self.devices_per_host is not None and self.devices_per_host < 1:
      problems.append(f"devices per host must be at least 1, got {self.devices_per_host}")
    if self.accelerator not in ACCELERATORS:
      problems.append(
          f"Invalid value for accelerator={self.accelerator!r}, possible values are {list(ACCELERATORS)}"
      )
    if not _DNS_LABEL.match(self.name):
      problems.append(f"the job name {self.name!r} must be lowercase letters, digits and '-' (at most 40)")
    if not 0 < self.port < 65536:
      problems.append(f"the port {self.port} is not in 1..65535")
    if not self.command:
      problems.append("the command is empty")
    if problems:
      raise CkptbenchError("; ".join(problems))

  @property
  def argv(self) -> list[str]:
    return [*self.command, "run", *self.run_args]

  @property
  def cpu_xla_flags(self) -> str | None:
    """XLA_FLAGS giving each host its simulated CPU devices (None off CPU or when unset)."""
    if self.accelerator == "cpu" and self.devices_per_host:
      return f"--xla_force_host_platform_device_count={self.devices_per_host}"
    return None


def jobset_manifest(job: ClusterJob) -> str:
  """A JobSet (jobset.x-k8s.io/v1alpha2) running `job` on `num_hosts` pods; YAML text.

  Raises:
    CkptbenchError: no image was given.
  """
  if not job.image:
    raise CkptbenchError("a Kubernetes JobSet needs a container image: pass --image")
  env = [
      # JobSet gives pod i of job j the host name <jobset>-<job>-<j>-<i>.<jobset>.
      {"name": "JAX_COORDINATOR_ADDRESS", "value": f"{job.name}-{_JOB}-0-0.{job.name}"},
      {"name": "JAX_COORDINATOR_PORT", "value": str(job.port)},
      {"name": "JAX_NUM_PROCESSES", "value": str(job.num_hosts)},
      {
          "name": "JAX_PROCESS_ID",
          "valueFrom": {
              "fieldRef": {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}
          },
      },
  ]
  if flags := job.cpu_xla_flags:
    env.append({"name": "XLA_FLAGS", "value": flags})
  container = {
      "name": "ckptbench",
      "image": job.image,
      "command": job.argv,
      "env": env,
      "ports": [{"containerPort": job.port, "name": "coordinator"}],
  }
  if job.accelerator in _K8S_RESOURCE and job.devices_per_host:
    container["resources"] = {"limits": {_K8S_RESOURCE[job.accelerator]: job.devices_per_host}}
  manifest = {
      "apiVersion": "jobset.x-k8s.io/v1alpha2",
      "kind": "JobSet",
      "metadata": {"name": job.name, "labels": {"app.kubernetes.io/name": "ckptbench"}},
      "spec": {
          "network": {"enableDNSHostnames": True},
          "failurePolicy": {"maxRestarts": 0},
          "replicatedJobs": [{
              "name": _JOB,
              "replicas": 1,
              "template": {"spec": {
                  "parallelism": job.num_hosts,
                  "completions": job.num_hosts,
                  "completionMode": "Indexed",
                  "backoffLimit": 0,
                  "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
              }},
          }],
      },
  }  # fmt: skip
  header = (
      f"# ckptbench on {job.num_hosts} hosts as a JobSet (https://jobset.sigs.k8s.io).\n"
      "# Apply with: kubectl apply -f THIS_FILE; the suite file and the output directory must be\n"
      "# visible to every pod under the same path (mount a shared volume or use a bucket path).\n"
  )
  import yaml  # noqa: PLC0415  (the command line imports this module for its flag choices)

  return header + yaml.safe_dump(manifest, sort_keys=False)


def slurm_script(job: ClusterJob) -> str:
  """An sbatch script running `job` as one task on each of `num_hosts` nodes."""
  q = shlex.quote
  directives = [
      f"#SBATCH --job-name={job.name}",
      f"#SBATCH --nodes={job.num_hosts}",
      "#SBATCH --ntasks-per-node=1",
      f"#SBATCH --output={job.name}-%j.out",
  ]
  if job.accelerator == "gpu" and job.devices_per_host:
    directives.append(f"#SBATCH --gpus-per-node={job.devices_per_host}")
  exports = [
      "# The first node of the allocation hosts the jax.distributed coordinator.",
      # (sed reads every line: `head -n 1` could kill scontrol with SIGPIPE, failing under pipefail)
      'JAX_COORDINATOR_ADDRESS="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 1p)"',
      "export JAX_COORDINATOR_ADDRESS",
      f"export JAX_COORDINATOR_PORT={job.port}",
      f"export JAX_NUM_PROCESSES={job.num_hosts}",
  ]
  if flags := job.cpu_xla_flags:
    exports.append(f"export XLA_FLAGS={q(flags)}")
  srun = ["srun --kill-on-bad-exit=1", f"--nodes={job.num_hosts}", f"--ntasks={job.num_hosts}"]
  srun.append("--ntasks-per-node=1")
  if job.image:
    srun.append(f"--container-image={q(job.image)}")
  lines = [
      "#!/bin/bash",
      *directives,
      f"# ckptbench on {job.num_hosts} hosts; submit with: sbatch THIS_FILE. The suite file and the",
      "# output directory must be on a filesystem that every node sees under the same path.",
      "set -euo pipefail",
      *exports,
      "# Each task is one JAX process; its index is SLURM_PROCID.",
      " ".join(srun) + " \\",
      "  bash -c 'export JAX_PROCESS_ID=\"$SLURM_PROCID\"; exec \"$@\"' ckptbench \\",
      "  " + " ".join(q(a) for a in job.argv),
  ]
  return "\n".join(lines) + "\n"


def render_manifest(kind: ManifestKind, job: ClusterJob) -> str:
  """The text of a `kind` launch file ("k8s-jobset" or "slurm") for `job`."""
  if kind == "k8s-jobset":
    return jobset_manifest(job)
  if kind == "slurm":
    return slurm_script(job)
  raise CkptbenchError(f"Invalid value for --emit={kind!r}, possible values are {list(MANIFEST_KINDS)}")
