"""s3://: Amazon S3 and S3-compatible stores, through boto3, s3fs and TensorStore's s3 driver.

Emulated by moto_server. orbax-checkpoint (0.12.8) cannot save to s3:// (docs/storage.md).
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

from ckptbench.errors import CkptbenchError
from ckptbench.storage._store import TIMEOUT_S, ObjectStore, Prices, StoredObject
from ckptbench.storage._url import StoreURL

REGION = "us-east-1"
_EXTRA = "needs the storage extra: pip install 'ckptbench[storage]'"
_TEST_KEYS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


class S3Store(ObjectStore):
  scheme = "s3"
  tensorstore_driver = "s3"
  # Orbax hands s3:// without OCDBT to TensorStore's file driver (a local 's3:' directory).
  orbax_writes = False
  uses_fsspec = True
  prices = Prices(0.023, 0.005, 0.0004, 0.005, "S3 Standard, us-east-1: aws.amazon.com/s3/pricing")
  endpoint_variable = "AWS_ENDPOINT_URL"
  emulator = "s3"

  def kvstore_base(self, url: StoreURL) -> dict[str, Any]:
    base = {"driver": "s3", "bucket": url.bucket, "path": url.prefix + "/" if url.prefix else "",
            "aws_region": os.environ.get("AWS_DEFAULT_REGION", REGION)}  # fmt: skip
    endpoint = self.endpoint()
    if endpoint:  # TensorStore's s3 driver ignores AWS_ENDPOINT_URL and would go to amazonaws.com
      base["endpoint"] = endpoint
    return base

  def list_objects(self, url: StoreURL) -> list[StoredObject]:
    prefix = url.prefix + "/" if url.prefix else ""
    pages = _client(url).get_paginator("list_objects_v2").paginate(Bucket=url.bucket, Prefix=prefix)
    return [StoredObject(o["Key"][len(prefix) :], int(o["Size"])) for page in pages for o in page.get("Contents", [])]

  def delete_objects(self, url: StoreURL, keys: list[str]) -> None:
    client = _client(url)
    objects = [{"Key": url.join(key).prefix} for key in keys]
    for i in range(0, len(objects), 1000):  # S3's limit per request
      client.delete_objects(Bucket=url.bucket, Delete={"Objects": objects[i : i + 1000]})

  def read_object(self, url: StoreURL) -> bytes:
    import botocore.exceptions  # noqa: PLC0415

    try:
      return _client(url).get_object(Bucket=url.bucket, Key=url.prefix)["Body"].read()
    except botocore.exceptions.ClientError as e:
      if str(e.response.get("Error", {}).get("Code")) in ("404", "NoSuchKey"):
        raise CkptbenchError(f"{url} does not exist") from None
      raise

  def write_object(self, url: StoreURL, data: bytes) -> None:
    _client(url).put_object(Bucket=url.bucket, Key=url.prefix, Body=data)

  def check(self, url: StoreURL) -> None:
    import botocore.exceptions  # noqa: PLC0415

    try:
      _client(url).head_bucket(Bucket=url.bucket)
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

  def endpoint(self) -> str | None:
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")

  def default_endpoint(self) -> str:
    return "AWS"

  def link_env(self, endpoint: str) -> dict[str, str]:
    return {"AWS_ENDPOINT_URL": endpoint}  # boto3 and s3fs; TensorStore gets it in its spec

  def emulator_command(self, port: int, bucket: str) -> list[str]:
    exe = shutil.which("moto_server", path=os.path.dirname(sys.executable)) or shutil.which("moto_server")
    if exe is None:
      raise CkptbenchError(f"the s3 emulator is not installed; {_EXTRA}")
    return [exe, "-H", "127.0.0.1", "-p", str(port)]

  def emulator_env(self, endpoint: str) -> dict[str, str]:
    return {
        **self.link_env(endpoint),
        "AWS_ACCESS_KEY_ID": _TEST_KEYS["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": _TEST_KEYS["aws_secret_access_key"],
        "AWS_DEFAULT_REGION": REGION,
    }

  def prepare_emulator(self, endpoint: str, bucket: str) -> None:
    import boto3  # noqa: PLC0415  (storage extra)
    import botocore.exceptions  # noqa: PLC0415

    client = boto3.client("s3", endpoint_url=endpoint, region_name=REGION, **_TEST_KEYS)
    try:
      client.create_bucket(Bucket=bucket)
    except botocore.exceptions.ClientError as e:
      raise CkptbenchError(f"cannot create bucket {bucket!r} on the s3 emulator: {e}") from None


def _client(url: StoreURL) -> Any:
  try:
    import boto3  # noqa: PLC0415  (storage extra)
    import botocore.config  # noqa: PLC0415
  except ImportError:
    raise CkptbenchError(f"{url}: {_EXTRA}") from None
  config = botocore.config.Config(
      connect_timeout=TIMEOUT_S, read_timeout=TIMEOUT_S, retries={"max_attempts": 2, "mode": "standard"}
  )
  # A fresh session: the default one caches credentials, so later changes to the environment were ignored.
  return boto3.session.Session().client("s3", endpoint_url=STORE.endpoint(), config=config)


STORE = S3Store()
