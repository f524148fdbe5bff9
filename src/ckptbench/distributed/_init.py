"""Starting JAX's distributed runtime (or Pathways) before the backend starts.

`initialize(mode)` must run after XLA_FLAGS is set and before anything touches
a JAX device: `jax.distributed.initialize` refuses to run once the backend is
up. It reads the standard variables

  JAX_COORDINATOR_ADDRESS  host or host:port of process 0's coordinator
  JAX_COORDINATOR_PORT     the port, where the address has none
  JAX_NUM_PROCESSES        how many processes take part
  JAX_PROCESS_ID           this process's index, 0 .. JAX_NUM_PROCESSES - 1

and the timeouts `CKPTBENCH_INIT_TIMEOUT_S`, `CKPTBENCH_HEARTBEAT_TIMEOUT_S`,
`CKPTBENCH_SHUTDOWN_TIMEOUT_S`, `CKPTBENCH_RUN_LIMIT_S`, `CKPTBENCH_RUN_GRACE_S`
(seconds). A run that asked for several
processes and cannot start them fails with `CkptbenchError`; it never falls
back to one process silently. A process other than 0 first waits (up to the
init timeout) for the coordinator's port to accept connections, so that an
unreachable coordinator is a one-line error; JAX itself aborts the process
when registration times out.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import socket
import sys
import time
from typing import Literal, Mapping

from ckptbench.distributed._choices import DISTRIBUTED_MODES
from ckptbench.distributed._pathways import is_pathways_backend
from ckptbench.errors import CkptbenchError

_LOG = logging.getLogger(__name__)

DistributedMode = Literal["off", "env", "auto"]
Backend = Literal["single", "jax", "pathways"]

DEFAULT_COORDINATOR_PORT = 8476


@dataclasses.dataclass(frozen=True)
class DistributedTimeouts:
  """Timeouts of a multi-process run, in seconds.

  The first three are handed to `jax.distributed.initialize`; the last two
  bound each benchmark run (the runner's watchdog, `engine/_watchdog.py`).

  Attributes:
    init_s: how long a process waits for all the others to connect.
    heartbeat_s: after how long without heartbeats a process counts as dead
      (the others then fail instead of waiting forever).
    shutdown_s: how long a finishing process waits for the others at exit.
    run_limit_s: the limit of a run whose benchmark sets no `timeout_s`.
    run_grace_s: added to a `timeout_s`; also how long a process whose run
      failed waits for the others at the gather after it.
  """

  init_s: int = 300
  heartbeat_s: int = 60
  shutdown_s: int = 60
  run_limit_s: int = 3600
  run_grace_s: int = 60

  @classmethod
  def from_env(cls, env: Mapping[str, str] | None = None) -> DistributedTimeouts:
    """Reads the `CKPTBENCH_*_TIMEOUT_S` overrides; unset ones keep their defaults."""
    env = os.environ if env is None else env
    values = {}
    for field, var in (
        ("init_s", "CKPTBENCH_INIT_TIMEOUT_S"),
        ("heartbeat_s", "CKPTBENCH_HEARTBEAT_TIMEOUT_S"),
        ("shutdown_s", "CKPTBENCH_SHUTDOWN_TIMEOUT_S"),
        ("run_limit_s", "CKPTBENCH_RUN_LIMIT_S"),
        ("run_grace_s", "CKPTBENCH_RUN_GRACE_S"),
    ):
      if var in env:
        values[field] = _positive_int(env, var)
    return cls(**values)


@dataclasses.dataclass(frozen=True)
class DistributedEnv:
  """What the JAX_* variables ask for (None where a variable is unset)."""

  coordinator_address: str | None
  num_processes: int | None
  process_id: int | None

  @property
  def requested(self) -> bool:
    """True when the variables ask for a multi-process run."""
    return (self.num_processes or 1) > 1 or self.coordinator_address is not None


def read_distributed_env(env: Mapping[str, str] | None = None) -> DistributedEnv:
  """Parses the JAX_* variables into a coordinator address with its port.

  Args:
    env: the environment to read; `os.environ` when None.

  Returns:
    The requested address (always `host:port`), process count and index.

  Raises:
    CkptbenchError: a variable is malformed or the port is given twice with
      two different values.

  Example:
    >>> read_distributed_env({"JAX_COORDINATOR_ADDRESS": "10.0.0.1",
    ...   "JAX_COORDINATOR_PORT": "1234", "JAX_NUM_PROCESSES": "2",
    ...   "JAX_PROCESS_ID": "1"}).coordinator_address
    '10.0.0.1:1234'
  """
  env = os.environ if env is None else env
  num = _positive_int(env, "JAX_NUM_PROCESSES") if "JAX_NUM_PROCESSES" in env else None
  pid = None
  if "JAX_PROCESS_ID" in env:
    pid = _int(env, "JAX_PROCESS_ID")
    if pid < 0 or (num is not None and pid >= num):
      raise CkptbenchError(
          f"JAX_PROCESS_ID={pid} is out of range: it must be in 0..{(num or 1) - 1} "
          "(JAX_NUM_PROCESSES - 1)"
      )
  port = _positive_int(env, "JAX_COORDINATOR_PORT") if env.get("JAX_COORDINATOR_PORT") else None
  address = env.get("JAX_COORDINATOR_ADDRESS") or None
  if address is not None:
    address = _with_port(address, port)
  return DistributedEnv(address, num, pid)


def _with_port(address: str, port: int | None) -> str:
  """Returns `host:port` for "host", "host:port", "[v6]", "[v6]:port" or a bare v6 address."""
  if address.startswith("["):
    host, _, rest = address.partition("]")
    host, given = host + "]", rest[1:]
    if rest and not rest.startswith(":"):
      given = rest
  elif address.count(":") == 1:
    host, given = address.split(":")
  elif ":" in address:
    host, given = f"[{address}]", ""
  else:
    host, given = address, ""
  if not given:
    return f"{host}:{port or DEFAULT_COORDINATOR_PORT}"
  if not given.isdigit():
    raise CkptbenchError(f"JAX_COORDINATOR_ADDRESS={address!r}: the port {given!r} is not a number")
  if port is not None and int(given) != port:
    raise CkptbenchError(
        f"JAX_COORDINATOR_ADDRESS={address!r} names port {given} but "
        f"JAX_COORDINATOR_PORT={port}; give the port once"
    )
  return f"{host}:{given}"


def _int(env: Mapping[str, str], var: str) -> int:
  try:
    return int(env[var])
  except ValueError:
    raise CkptbenchError(f"{var}={env[var]!r} is not an integer") from None


def _positive_int(env: Mapping[str, str], var: str) -> int:
  value = _int(env, var)
  if value < 1:
    raise CkptbenchError(f"{var}={value} must be at least 1")
  return value


def wait_for_coordinator(address: str, timeout_s: float) -> None:
  """Returns once `address` (host:port) accepts TCP connections; retries until `timeout_s`.

  Raises:
    CkptbenchError: it did not within `timeout_s` seconds.
  """
  host, _, port = address.rpartition(":")
  deadline = time.monotonic() + timeout_s
  while True:
    try:
      with socket.create_connection((host.strip("[]"), int(port)), timeout=min(2.0, timeout_s)):
        return
    except OSError as e:
      if time.monotonic() >= deadline:
        raise CkptbenchError(
            f"cannot reach the jax.distributed coordinator at {address} within {timeout_s:g} s"
            f" ({e.strerror or e}); is process 0 running, and is JAX_COORDINATOR_ADDRESS its address?"
        ) from None
      time.sleep(0.25)


def initialize(
    mode: DistributedMode = "env",
    *,
    timeouts: DistributedTimeouts | None = None,
    env: Mapping[str, str] | None = None,
) -> Backend:
  """Starts the multi-process runtime this run asks for; call before JAX starts.

  Args:
    mode: "off" runs as one process whatever the environment says; "env"
      starts `jax.distributed` when the JAX_* variables ask for several
      processes (and does nothing when they are unset); "auto" also lets JAX
      detect its supported clusters (SLURM, Kubernetes, Open MPI, Cloud TPU),
      and runs as one process where it finds none. In "env" and "auto" the
      Pathways backend, when in use, is initialised instead.
    timeouts: `jax.distributed` timeouts; `DistributedTimeouts.from_env()`
      when None.
    env: the environment to read; `os.environ` when None.

  Returns:
    "single", "jax" (jax.distributed is up) or "pathways".

  Raises:
    CkptbenchError: a bad mode or variable, or several processes were asked
      for and the runtime could not start.
  """
  if mode not in DISTRIBUTED_MODES:
    raise CkptbenchError(
        f"Invalid value for distributed={mode!r}, possible values are {list(DISTRIBUTED_MODES)}"
    )
  if mode == "off":
    return "single"
  import jax  # noqa: PLC0415  (here, not at the top: the launcher and the CLI's flags need no JAX)

  if is_pathways_backend():
    import pathwaysutils  # noqa: PLC0415  (optional: the pathways extra)

    pathwaysutils.initialize()
    return "pathways"

  if jax.distributed.is_initialized():
    return "jax"
  asked = read_distributed_env(env)
  if mode == "env" and not asked.requested:
    return "single"
  if mode == "env":
    _check_complete(asked)
  return _start_jax(asked, timeouts or DistributedTimeouts.from_env(env), mode)


def _check_complete(asked: DistributedEnv) -> None:
  """Raises unless the variables a multi-process run needs (without cluster detection) are all set."""
  missing = [
      var
      for var, value in (
          ("JAX_COORDINATOR_ADDRESS", asked.coordinator_address),
          ("JAX_NUM_PROCESSES", asked.num_processes),
          ("JAX_PROCESS_ID", asked.process_id),
      )
      if value is None
  ]
  if missing:
    raise CkptbenchError(
        f"a multi-process run needs {', '.join(missing)} set (or use --distributed auto "
        "on SLURM, Kubernetes or MPI)"
    )


def _start_jax(asked: DistributedEnv, timeouts: DistributedTimeouts, mode: DistributedMode) -> Backend:
  """Starts jax.distributed as `asked`; "single" when "auto" finds no cluster and nothing was asked for."""
  import jax  # noqa: PLC0415  (as in initialize: the launcher and the CLI's flags need no JAX)

  if asked.process_id and asked.coordinator_address:
    wait_for_coordinator(asked.coordinator_address, timeouts.init_s)
  _LOG.info(
      "starting jax.distributed: coordinator %s, process %s of %s (waiting up to %d s for the others)",
      asked.coordinator_address or "(auto)", asked.process_id, asked.num_processes, timeouts.init_s,
  )
  try:
    jax.distributed.initialize(
        coordinator_address=asked.coordinator_address,
        num_processes=asked.num_processes,
        process_id=asked.process_id,
        initialization_timeout=timeouts.init_s,
        heartbeat_timeout_seconds=timeouts.heartbeat_s,
        shutdown_timeout_seconds=timeouts.shutdown_s,
    )
  except (ValueError, TypeError) as e:
    # Raised before any connection: "auto" found no cluster and nothing was asked for.
    if mode == "auto" and not asked.requested and not jax.distributed.is_initialized():
      _LOG.info("no cluster detected (%s); running as one process", e)
      return "single"
    raise CkptbenchError(f"could not start jax.distributed: {e}") from None
  except Exception as e:  # noqa: BLE001  (jaxlib raises its own runtime error types)
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    raise CkptbenchError(
        f"could not start jax.distributed with coordinator {asked.coordinator_address or '(auto)'}"
        f" as process {asked.process_id if asked.process_id is not None else '(auto)'}"
        f" of {asked.num_processes or '(auto)'}: {first}"
    ) from None
  return "jax"


def leave() -> None:
  """Leaves jax.distributed with the other processes (its shutdown barrier), where this process joined it.

  A process that ends with `os._exit` skips JAX's own exit hook: process 0, which hosts the
  coordination service, would then take the service down while another process still polls it, and
  that process aborts (SIGABRT, seen under load at the end of a 4-process run). Without JAX loaded,
  or outside jax.distributed, it does nothing.
  """
  jax = sys.modules.get("jax")
  if jax is None or not jax.distributed.is_initialized():
    return
  try:
    jax.distributed.shutdown()
  except Exception as e:  # noqa: BLE001  (a peer already gone: this process is exiting anyway)
    _LOG.warning("leaving jax.distributed: %s", e)
