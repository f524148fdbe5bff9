"""Local object-store emulators (gcp-storage-emulator, moto_server) as subprocesses on 127.0.0.1.

Both are real HTTP servers speaking the GCS JSON API or the S3 API; ckptbench,
TensorStore, gcsfs and s3fs talk to them as they would to the cloud, given the
environment `Emulator.env` describes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from typing import Iterator, Mapping

from ckptbench.errors import CkptbenchError

KINDS = ("gcs", "s3")
DEFAULT_BUCKET = "ckptbench"
_START_TIMEOUT_S = 30.0
S3_REGION = "us-east-1"
_NOT_INSTALLED = "the {kind} emulator is not installed; install the storage extra: pip install 'ckptbench[storage]'"


@dataclasses.dataclass(frozen=True)
class Emulator:
  """A running emulator.

  Attributes:
    kind: "gcs" or "s3".
    endpoint: its base URL, http://127.0.0.1:PORT.
    bucket: a bucket that exists on it.
    env: the environment variables that point every client at it.
    pid: the server's process id.
  """

  kind: str
  endpoint: str
  bucket: str
  env: Mapping[str, str]
  pid: int

  @property
  def url(self) -> str:
    """The bucket as a gs:// or s3:// URL."""
    return f"{'gs' if self.kind == 'gcs' else 's3'}://{self.bucket}"


def emulator_env(kind: str, endpoint: str) -> dict[str, str]:
  """The environment variables that send clients of store `kind` to `endpoint`."""
  if kind == "gcs":
    return {
        "TENSORSTORE_GCS_HTTP_URL": endpoint,
        "GOOGLE_AUTH_TOKEN_FOR_TESTING": "dummy",
        "STORAGE_EMULATOR_HOST": endpoint,
        # Without it gcsfs first tries a gRPC call the emulator never answers (~60 s).
        "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false",
    }
  if kind == "s3":
    return {
        "AWS_ENDPOINT_URL": endpoint,  # boto3 and s3fs; TensorStore needs it in the spec
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": S3_REGION,
    }
  raise CkptbenchError(f"unknown emulator {kind!r}; choose one of {', '.join(KINDS)}")


def free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def _command(kind: str, port: int, bucket: str) -> list[str]:
  if kind == "gcs":
    if importlib.util.find_spec("gcp_storage_emulator") is None:
      raise CkptbenchError(_NOT_INSTALLED.format(kind=kind))
    return [sys.executable, "-m", "ckptbench.storage._gcs_emulator", "start", "--host=127.0.0.1",
            f"--port={port}", "--in-memory", f"--default-bucket={bucket}"]  # fmt: skip
  exe = shutil.which("moto_server", path=os.path.dirname(sys.executable)) or shutil.which("moto_server")
  if exe is None:
    raise CkptbenchError(_NOT_INSTALLED.format(kind=kind))
  return [exe, "-H", "127.0.0.1", "-p", str(port)]


def _wait_until_up(proc: subprocess.Popen, endpoint: str, kind: str) -> None:
  deadline = time.monotonic() + _START_TIMEOUT_S
  probe = f"{endpoint}/storage/v1/b" if kind == "gcs" else endpoint
  while time.monotonic() < deadline:
    if proc.poll() is not None:
      raise CkptbenchError(f"the {kind} emulator exited at start (code {proc.returncode})")
    try:
      urllib.request.urlopen(probe, timeout=1).close()
      return
    except OSError:
      time.sleep(0.1)
  proc.kill()
  raise CkptbenchError(f"the {kind} emulator did not answer on {endpoint} within {_START_TIMEOUT_S:.0f} s")


def _create_s3_bucket(endpoint: str, bucket: str) -> None:
  import boto3  # noqa: PLC0415  (storage extra)
  import botocore.exceptions  # noqa: PLC0415

  client = boto3.client(
      "s3", endpoint_url=endpoint, region_name=S3_REGION,
      aws_access_key_id="testing", aws_secret_access_key="testing",
  )  # fmt: skip
  try:
    client.create_bucket(Bucket=bucket)
  except botocore.exceptions.ClientError as e:
    raise CkptbenchError(f"cannot create bucket {bucket!r} on the s3 emulator: {e}") from None


def start_emulator(
    kind: str, *, port: int | None = None, bucket: str = DEFAULT_BUCKET, log_path: str | None = None
) -> tuple[Emulator, subprocess.Popen]:
  """Starts emulator `kind` ("gcs" or "s3") on 127.0.0.1 and creates `bucket` on it.

  Returns the emulator's description and its process (stop it with `stop_emulator`).
  """
  if kind not in KINDS:
    raise CkptbenchError(f"unknown emulator {kind!r}; choose one of {', '.join(KINDS)}")
  port = port or free_port()
  endpoint = f"http://127.0.0.1:{port}"
  log = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115
  proc = subprocess.Popen(
      _command(kind, port, bucket), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
      start_new_session=True,  # a Ctrl-C in the terminal reaches us, and we stop it
  )  # fmt: skip
  try:
    _wait_until_up(proc, endpoint, kind)
    if kind == "s3":
      _create_s3_bucket(endpoint, bucket)
  except BaseException:
    stop_emulator(proc)
    raise
  return Emulator(kind, endpoint, bucket, emulator_env(kind, endpoint), proc.pid), proc


def stop_emulator(proc: subprocess.Popen) -> None:
  """Stops an emulator started by `start_emulator`."""
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
