"""Object-store URLs: scheme://bucket/prefix (which schemes exist is the registry's business)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class StoreURL:
  """A parsed object-store location.

  Attributes:
    scheme: a registered store's scheme ("gs", "s3", ...).
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
