"""Object-store URLs (gs://bucket/prefix, s3://bucket/prefix) and what Orbax can do with each."""

from __future__ import annotations

import dataclasses
import os

from ckptbench.errors import CkptbenchError

SCHEMES = ("gs", "s3")


@dataclasses.dataclass(frozen=True)
class StoreURL:
  """A parsed object-store location.

  Attributes:
    scheme: "gs" or "s3".
    bucket: the bucket name.
    prefix: the key prefix below the bucket, without leading or trailing "/".
  """

  scheme: str
  bucket: str
  prefix: str = ""

  def __str__(self) -> str:
    return f"{self.scheme}://{self.bucket}" + (f"/{self.prefix}" if self.prefix else "")

  def join(self, *parts: str) -> "StoreURL":
    """This location with `parts` appended to the prefix."""
    pieces = [self.prefix] if self.prefix else []
    pieces += [p.strip("/") for p in parts if p.strip("/")]
    return StoreURL(self.scheme, self.bucket, "/".join(pieces))


def is_store_url(path: str | os.PathLike | None) -> bool:
  """True for a gs:// or s3:// location (any other scheme, or a local path, is False)."""
  if path is None:
    return False
  text = str(path)
  return any(text.startswith(f"{scheme}://") for scheme in SCHEMES)


def parse_store_url(text: str | os.PathLike) -> StoreURL:
  """Parses gs://bucket[/prefix] or s3://bucket[/prefix].

  Raises:
    CkptbenchError: for another scheme or a URL without a bucket.
  """
  text = str(text)
  scheme, sep, rest = text.partition("://")
  if not sep or scheme not in SCHEMES:
    raise CkptbenchError(f"{text}: not an object-store URL; use gs://BUCKET/PREFIX or s3://BUCKET/PREFIX")
  bucket, _, prefix = rest.partition("/")
  if not bucket:
    raise CkptbenchError(f"{text}: no bucket; use {scheme}://BUCKET/PREFIX")
  return StoreURL(scheme, bucket, prefix.strip("/"))

