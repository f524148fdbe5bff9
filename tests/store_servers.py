"""Fixtures: real object-store emulators (gcp-storage-emulator, moto_server) as subprocesses on 127.0.0.1.

Import the fixtures into a test module (`from store_servers import gcs_store, s3_store`).
Tests using them skip, with the reason, when the storage extra is not installed.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

_EXTRA = ("gcp_storage_emulator", "moto", "boto3", "google.cloud.storage", "gcsfs", "s3fs")


def _missing_extra() -> str | None:
  for name in _EXTRA:
    try:
      found = importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
      found = False
    if not found:
      return f"the storage extra is not installed ({name} missing): pip install -e '.[storage]'"
  return None


def _store(kind: str, tmp_path_factory):
  reason = _missing_extra()
  if reason:
    pytest.skip(reason)
  from ckptbench.storage import running_emulator

  log = tmp_path_factory.mktemp(f"{kind}_emulator") / "server.log"
  with running_emulator(kind, log_path=str(log)) as emulator:
    saved = {k: os.environ.get(k) for k in emulator.env}
    os.environ.update(emulator.env)  # in-process clients (TensorStore, gcsfs, boto3) use it too
    try:
      yield emulator
    finally:
      for k, v in saved.items():
        if v is None:
          os.environ.pop(k, None)
        else:
          os.environ[k] = v


@pytest.fixture(scope="module")
def gcs_store(tmp_path_factory):
  """A running GCS emulator with bucket `ckptbench`; its environment is set while it runs."""
  yield from _store("gcs", tmp_path_factory)


@pytest.fixture(scope="module")
def s3_store(tmp_path_factory):
  """A running S3 emulator (moto_server) with bucket `ckptbench`; its environment is set while it runs."""
  yield from _store("s3", tmp_path_factory)
