"""gs://: Google Cloud Storage, through google-cloud-storage, gcsfs and TensorStore's gcs driver.

Emulated by gcp-storage-emulator with ckptbench's fidelity fixes (storage/_gcs_emulator.py).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

from ckptbench.errors import CkptbenchError
from ckptbench.storage._store import TIMEOUT_S, ObjectStore, Prices, StoredObject
from ckptbench.storage._url import StoreURL

_EXTRA = "needs the storage extra: pip install 'ckptbench[storage]'"


class GCSStore(ObjectStore):
  scheme = "gs"
  tensorstore_driver = "gcs"
  uses_fsspec = True
  prices = Prices(0.020, 0.005, 0.0004, 0.005, "GCS Standard, us-central1: cloud.google.com/storage/pricing")
  endpoint_variable = "STORAGE_EMULATOR_HOST"
  emulator = "gcs"

  def kvstore_base(self, url: StoreURL) -> dict[str, Any]:
    return {"driver": "gcs", "bucket": url.bucket, "path": url.prefix + "/" if url.prefix else ""}

  def list_objects(self, url: StoreURL) -> list[StoredObject]:
    prefix = url.prefix + "/" if url.prefix else ""
    blobs = _bucket(url).list_blobs(prefix=prefix, timeout=TIMEOUT_S, retry=_retry())
    return [StoredObject(blob.name[len(prefix) :], int(blob.size or 0)) for blob in blobs]

  def delete_objects(self, url: StoreURL, keys: list[str]) -> None:
    bucket = _bucket(url)
    for key in keys:
      bucket.blob(url.join(key).prefix).delete(timeout=TIMEOUT_S, retry=_retry())

  def read_object(self, url: StoreURL) -> bytes:
    from google.api_core import exceptions  # noqa: PLC0415

    try:
      return _bucket(url).blob(url.prefix).download_as_bytes(timeout=TIMEOUT_S, retry=_retry())
    except exceptions.NotFound:
      raise CkptbenchError(f"{url} does not exist") from None

  def write_object(self, url: StoreURL, data: bytes) -> None:
    _bucket(url).blob(url.prefix).upload_from_string(data, timeout=TIMEOUT_S, retry=_retry())

  def check(self, url: StoreURL) -> None:
    from google.api_core import exceptions  # noqa: PLC0415

    bucket = _bucket(url)
    try:
      if not bucket.exists(timeout=TIMEOUT_S / 2, retry=_retry()):
        raise CkptbenchError(f"{url}: bucket '{url.bucket}' does not exist; create it or fix the URL")
    except exceptions.Forbidden:
      raise CkptbenchError(
          f"{url}: access to bucket '{url.bucket}' denied; check GOOGLE_APPLICATION_CREDENTIALS"
      ) from None

  def endpoint(self) -> str | None:
    return os.environ.get("STORAGE_EMULATOR_HOST")

  def default_endpoint(self) -> str:
    return "https://storage.googleapis.com"

  def link_env(self, endpoint: str) -> dict[str, str]:
    return {"TENSORSTORE_GCS_HTTP_URL": endpoint, "STORAGE_EMULATOR_HOST": endpoint}

  def emulator_command(self, port: int, bucket: str) -> list[str]:
    if importlib.util.find_spec("gcp_storage_emulator") is None:
      raise CkptbenchError(f"the gcs emulator is not installed; {_EXTRA}")
    return [sys.executable, "-m", "ckptbench.storage._gcs_emulator", "start", "--host=127.0.0.1",
            f"--port={port}", "--in-memory", f"--default-bucket={bucket}"]  # fmt: skip

  def emulator_ready_url(self, endpoint: str) -> str:
    return f"{endpoint}/storage/v1/b"

  def emulator_env(self, endpoint: str) -> dict[str, str]:
    return {
        **self.link_env(endpoint),
        "GOOGLE_AUTH_TOKEN_FOR_TESTING": "dummy",  # TensorStore skips Google credentials
        # Without it gcsfs first tries a gRPC call the emulator never answers (~60 s).
        "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false",
    }


def _bucket(url: StoreURL) -> Any:
  try:
    from google.cloud import storage  # noqa: PLC0415  (storage extra)
  except ImportError:
    raise CkptbenchError(f"{url}: {_EXTRA}") from None
  import google.auth.exceptions  # noqa: PLC0415

  try:
    client = storage.Client()
  except google.auth.exceptions.DefaultCredentialsError:
    raise CkptbenchError(
        f"{url}: no Google credentials; run `gcloud auth application-default login` or set"
        " GOOGLE_APPLICATION_CREDENTIALS (for an emulator: STORAGE_EMULATOR_HOST, see `ckptbench emulate gcs`)"
    ) from None
  return client.bucket(url.bucket)


def _retry() -> Any:
  """Retries of transient errors for at most TIMEOUT_S in all (the library's default is 120 s)."""
  from google.api_core import retry  # noqa: PLC0415

  return retry.Retry(timeout=TIMEOUT_S, initial=0.2, maximum=2.0)


STORE = GCSStore()
