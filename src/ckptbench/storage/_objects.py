"""Talking to a bucket with explicit timeouts: list, delete, reachability.

Every call here is bounded (connect and read timeouts, few retries), so a
wrong endpoint or a dead emulator gives an error in seconds, never a hang.
google-cloud-storage and boto3 read the same environment as TensorStore,
gcsfs and s3fs (STORAGE_EMULATOR_HOST, AWS_ENDPOINT_URL, credentials).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from ckptbench.errors import CkptbenchError
from ckptbench.storage._url import StoreURL, parse_store_url

TIMEOUT_S = 10.0


@dataclasses.dataclass(frozen=True)
class StoredObject:
  key: str  # relative to the listed prefix
  size: int


def _gcs_bucket(url: StoreURL) -> Any:
  try:
    from google.cloud import storage  # noqa: PLC0415  (storage extra)
  except ImportError:
    raise CkptbenchError(f"{url}: needs the storage extra: pip install 'ckptbench[storage]'") from None
  import google.auth.exceptions  # noqa: PLC0415

  try:
    client = storage.Client()
  except google.auth.exceptions.DefaultCredentialsError:
    raise CkptbenchError(
        f"{url}: no Google credentials; run `gcloud auth application-default login` or set"
        " GOOGLE_APPLICATION_CREDENTIALS (for an emulator: STORAGE_EMULATOR_HOST, see `ckptbench emulate gcs`)"
    ) from None
  return client.bucket(url.bucket)


def _gcs_retry() -> Any:
  """Retries of transient errors for at most TIMEOUT_S in all (the library's default is 120 s)."""
  from google.api_core import retry  # noqa: PLC0415

  return retry.Retry(timeout=TIMEOUT_S, initial=0.2, maximum=2.0)


def endpoint_of(url: StoreURL) -> str | None:
  """The endpoint set in the environment for `url`'s store (None: the cloud's own)."""
  if url.scheme == "gs":
    return os.environ.get("STORAGE_EMULATOR_HOST")
  return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")


def _s3_client(url: StoreURL) -> Any:
  try:
    import boto3  # noqa: PLC0415  (storage extra)
    import botocore.config  # noqa: PLC0415
  except ImportError:
    raise CkptbenchError(f"{url}: needs the storage extra: pip install 'ckptbench[storage]'") from None
  config = botocore.config.Config(
      connect_timeout=TIMEOUT_S, read_timeout=TIMEOUT_S, retries={"max_attempts": 2, "mode": "standard"}
  )
  # A fresh session: the default one caches credentials, so later changes to the environment were ignored.
  return boto3.session.Session().client("s3", endpoint_url=endpoint_of(url), config=config)


def list_objects(url: StoreURL | str) -> list[StoredObject]:
  """Every object below `url` (its prefix as a directory), with sizes."""
  url = parse_store_url(url) if isinstance(url, str) else url
  prefix = url.prefix + "/" if url.prefix else ""
  out = []
  if url.scheme == "gs":
    for blob in _gcs_bucket(url).list_blobs(prefix=prefix, timeout=TIMEOUT_S, retry=_gcs_retry()):
      out.append(StoredObject(blob.name[len(prefix):], int(blob.size or 0)))
  else:
    pages = _s3_client(url).get_paginator("list_objects_v2").paginate(Bucket=url.bucket, Prefix=prefix)
    for page in pages:
      for obj in page.get("Contents", []):
        out.append(StoredObject(obj["Key"][len(prefix):], int(obj["Size"])))
  return out


def delete_prefix(url: StoreURL | str) -> int:
  """Deletes every object below `url`; returns how many."""
  url = parse_store_url(url) if isinstance(url, str) else url
  objects = list_objects(url)
  if url.scheme == "gs":
    bucket = _gcs_bucket(url)
    for obj in objects:
      bucket.blob(url.join(obj.key).prefix).delete(timeout=TIMEOUT_S, retry=_gcs_retry())
  else:
    client = _s3_client(url)
    keys = [{"Key": url.join(o.key).prefix} for o in objects]
    for i in range(0, len(keys), 1000):
      client.delete_objects(Bucket=url.bucket, Delete={"Objects": keys[i : i + 1000]})
  return len(objects)


def check_store(url: StoreURL | str) -> None:
  """A quick check that `url`'s bucket is reachable, readable and writable-looking.

  Raises:
    CkptbenchError: one line naming the URL and what to set (unreachable
      endpoint, missing credentials, missing bucket).
  """
  url = parse_store_url(url) if isinstance(url, str) else url
  endpoint = endpoint_of(url) or ("https://storage.googleapis.com" if url.scheme == "gs" else "AWS")
  hint = "STORAGE_EMULATOR_HOST" if url.scheme == "gs" else "AWS_ENDPOINT_URL"
  try:
    if url.scheme == "gs":
      _check_gcs(url)
    else:
      _check_s3(url)
  except CkptbenchError:
    raise
  except Exception as e:  # noqa: BLE001  (every client error becomes one line)
    text = f"{type(e).__name__}: {e}".splitlines()[0][:300]
    if _looks_unreachable(e):
      raise CkptbenchError(
          f"{url}: the store at {endpoint} cannot be reached ({text}); check {hint} or the network"
      ) from None
    raise CkptbenchError(f"{url}: the store at {endpoint} refused the check ({text})") from None


def _looks_unreachable(e: BaseException) -> bool:
  names = {type(x).__name__ for x in _chain(e)}
  return bool(names & {"ConnectionError", "EndpointConnectionError", "ConnectTimeoutError",
                       "ConnectTimeout", "ReadTimeout", "ReadTimeoutError", "NewConnectionError",
                       "MaxRetryError", "ConnectionRefusedError", "TransportError", "RetryError"})  # fmt: skip


def _chain(e: BaseException | None):
  seen = set()
  while e is not None and id(e) not in seen:
    seen.add(id(e))
    yield e
    e = e.__cause__ or e.__context__


def _check_gcs(url: StoreURL) -> None:
  from google.api_core import exceptions  # noqa: PLC0415

  bucket = _gcs_bucket(url)
  try:
    if not bucket.exists(timeout=TIMEOUT_S / 2, retry=_gcs_retry()):
      raise CkptbenchError(f"{url}: bucket '{url.bucket}' does not exist; create it or fix the URL")
  except exceptions.Forbidden:
    raise CkptbenchError(
        f"{url}: access to bucket '{url.bucket}' denied; check GOOGLE_APPLICATION_CREDENTIALS"
    ) from None


def _check_s3(url: StoreURL) -> None:
  import botocore.exceptions  # noqa: PLC0415

  client = _s3_client(url)
  try:
    client.head_bucket(Bucket=url.bucket)
  except botocore.exceptions.NoCredentialsError:
    raise CkptbenchError(
        f"{url}: no AWS credentials; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)"
    ) from None
  except botocore.exceptions.ClientError as e:
    code = str(e.response.get("Error", {}).get("Code", ""))
    if code in ("404", "NoSuchBucket", "NotFound"):
      raise CkptbenchError(f"{url}: bucket '{url.bucket}' does not exist; create it or fix the URL") from None
    if code in ("403", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
      raise CkptbenchError(
          f"{url}: access to bucket '{url.bucket}' denied ({code}); check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY"
      ) from None
    raise


def read_object(url: StoreURL | str) -> bytes:
  """The bytes of one object (its URL's prefix is the key).

  Raises:
    CkptbenchError: when the object does not exist.
  """
  url = parse_store_url(url) if isinstance(url, str) else url
  if url.scheme == "gs":
    from google.api_core import exceptions  # noqa: PLC0415

    try:
      return _gcs_bucket(url).blob(url.prefix).download_as_bytes(timeout=TIMEOUT_S, retry=_gcs_retry())
    except exceptions.NotFound:
      raise CkptbenchError(f"{url} does not exist") from None
  import botocore.exceptions  # noqa: PLC0415

  try:
    return _s3_client(url).get_object(Bucket=url.bucket, Key=url.prefix)["Body"].read()
  except botocore.exceptions.ClientError as e:
    if str(e.response.get("Error", {}).get("Code")) in ("404", "NoSuchKey"):
      raise CkptbenchError(f"{url} does not exist") from None
    raise


def write_object(url: StoreURL | str, data: bytes) -> None:
  """Writes one object (a single PUT: readers see the old or the new bytes, never half)."""
  url = parse_store_url(url) if isinstance(url, str) else url
  if url.scheme == "gs":
    _gcs_bucket(url).blob(url.prefix).upload_from_string(data, timeout=TIMEOUT_S, retry=_gcs_retry())
  else:
    _s3_client(url).put_object(Bucket=url.bucket, Key=url.prefix, Body=data)


def upload_directory(local: str | os.PathLike, url: StoreURL | str) -> int:
  """Copies every file below `local` to the same relative keys below `url`; returns how many."""
  url = parse_store_url(url) if isinstance(url, str) else url
  count = 0
  for dirpath, _, names in os.walk(local):
    for name in names:
      full = os.path.join(dirpath, name)
      rel = os.path.relpath(full, local).replace(os.sep, "/")
      with open(full, "rb") as f:
        write_object(url.join(rel), f.read())
      count += 1
  return count
