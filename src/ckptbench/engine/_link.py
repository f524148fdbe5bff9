"""The shaped link (`--link`) for a run: a local proxy between this process and its store."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
from typing import Iterator

from ckptbench.errors import CkptbenchError
from ckptbench.storage import (
    Link, is_store_url, link_env, link_upstream, parse_link, parse_store_url, start_link, stop_emulator, url_forms,
)
from ckptbench.storage import LINK_STATS_PATH, LINK_STATS_URL_ENV


@contextlib.contextmanager
def shaped_link(spec: str | None, checkpoint_root: str | None) -> Iterator[Link | None]:
  """Starts the link to the checkpoint root's store and points this process's clients at it.

  Yields None when no link was asked for. The link stops when the block ends.

  Raises:
    CkptbenchError: a bad spec, no store to shape the way to, or no endpoint for it.
  """
  if not spec:
    yield None
    return
  shape = parse_link(spec)
  if not is_store_url(checkpoint_root):
    raise CkptbenchError(f"--link shapes the way to an object store: give a checkpoint root like {url_forms()}")
  url = parse_store_url(checkpoint_root)
  link, proc = start_link(link_upstream(url), shape)
  os.environ.update(link_env(url.scheme, link.endpoint))  # TensorStore, gcsfs, s3fs and boto3 read these
  os.environ[LINK_STATS_URL_ENV] = link.endpoint + LINK_STATS_PATH  # each measured block's requests
  try:
    yield link
  finally:
    os.environ.pop(LINK_STATS_URL_ENV, None)
    stop_emulator(proc)


def write_link_summary(link: Link, out_dir: pathlib.Path) -> dict:
  """OUT/link.json: the link's shape and what crossed it (requests, injected errors)."""
  summary = {"shape": link.shape.describe(), "stats": link.stats()}
  (out_dir / "link.json").write_text(json.dumps(summary, indent=1))
  return summary
