"""Local object-store emulators (gcp-storage-emulator, moto_server, ...) as subprocesses on 127.0.0.1.

Each is a real HTTP server speaking its store's API; ckptbench, TensorStore,
gcsfs and s3fs talk to it as they would to the cloud, given the environment
`Emulator.env` describes. Which emulators exist, and how each starts, is the
stores' business (`ObjectStore.emulator`, `emulator_command`, ...).
"""

from __future__ import annotations

import contextlib
import dataclasses
import socket
import subprocess
import time
import urllib.request
from typing import Iterator, Mapping

from ckptbench.errors import CkptbenchError
from ckptbench.storage._registry import emulators

DEFAULT_BUCKET = "ckptbench"
_START_TIMEOUT_S = 30.0


@dataclasses.dataclass(frozen=True)
class Emulator:
  """A running emulator.

  Attributes:
    kind: its name ("gcs", "s3": `ckptbench emulate KIND`).
    endpoint: its base URL, http://127.0.0.1:PORT.
    bucket: a bucket that exists on it.
    env: the environment variables that point every client at it.
    pid: the server's process id.
    scheme: the URL scheme of its store.
  """

  kind: str
  endpoint: str
  bucket: str
  env: Mapping[str, str]
  pid: int
  scheme: str

  @property
  def url(self) -> str:
    """The bucket as a URL (gs://ckptbench)."""
    return f"{self.scheme}://{self.bucket}"


def emulator_kinds() -> tuple[str, ...]:
  """The names `start_emulator` takes, sorted."""
  return tuple(sorted(emulators()))


def free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def _wait_until_up(proc: subprocess.Popen, probe: str, kind: str) -> None:
  deadline = time.monotonic() + _START_TIMEOUT_S
  while time.monotonic() < deadline:
    if proc.poll() is not None:
      raise CkptbenchError(f"the {kind} emulator exited at start (code {proc.returncode})")
    try:
      urllib.request.urlopen(probe, timeout=1).close()
      return
    except OSError:
      time.sleep(0.1)
  proc.kill()
  raise CkptbenchError(f"the {kind} emulator did not answer on {probe} within {_START_TIMEOUT_S:.0f} s")


def start_emulator(
    kind: str, *, port: int | None = None, bucket: str = DEFAULT_BUCKET, log_path: str | None = None
) -> tuple[Emulator, subprocess.Popen]:
  """Starts emulator `kind` (see `emulator_kinds`) on 127.0.0.1 and creates `bucket` on it.

  Returns the emulator's description and its process (stop it with `stop_emulator`).
  """
  store = emulators().get(kind)
  if store is None:
    raise CkptbenchError(f"unknown emulator {kind!r}; choose one of {', '.join(emulator_kinds())}")
  port = port or free_port()
  endpoint = f"http://127.0.0.1:{port}"
  log = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115
  proc = subprocess.Popen(
      store.emulator_command(port, bucket), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
      start_new_session=True,  # a Ctrl-C in the terminal reaches us, and we stop it
  )  # fmt: skip
  try:
    _wait_until_up(proc, store.emulator_ready_url(endpoint), kind)
    store.prepare_emulator(endpoint, bucket)
  except BaseException:
    stop_emulator(proc)
    raise
  return Emulator(kind, endpoint, bucket, store.emulator_env(endpoint), proc.pid, store.scheme), proc


def stop_emulator(proc: subprocess.Popen) -> None:
  """Stops an emulator started by `start_emulator` (or the shaped link)."""
  if proc.poll() is None:
    proc.terminate()
    try:
      proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
      proc.kill()
      proc.wait()


@contextlib.contextmanager
def running_emulator(kind: str, **kwargs) -> Iterator[Emulator]:
  """`start_emulator` for the length of a `with` block."""
  emulator, proc = start_emulator(kind, **kwargs)
  try:
    yield emulator
  finally:
    stop_emulator(proc)


def shell_exports(env: Mapping[str, str]) -> str:
  """`export K=V` lines a shell can `eval`."""
  return "\n".join(f"export {k}={v}" for k, v in sorted(env.items()))
