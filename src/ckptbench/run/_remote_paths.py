"""Refusing, before anything runs, a suite that names object-storage paths this machine cannot reach.

Orbax's suites point at `gs://` buckets. `plan` accepts such paths (planning
needs no data); `run` checks each one first, so an unreachable bucket is one
clear storage message instead of a failure deep inside every benchmark.
"""

from __future__ import annotations

import concurrent.futures
from typing import Any, Iterator

from ckptbench.config import Suite
from ckptbench.errors import CkptbenchError

_TIMEOUT_S = 20.0


def remote_paths(suite: Suite) -> Iterator[tuple[str, str]]:
  """(where, url) for every `scheme://` path in checkpoint configs and benchmark options."""
  for i, source in enumerate(suite.checkpoints):
    for key in ("path", "sharding_config_path"):
      value = getattr(source.config, key)
      if isinstance(value, str) and "://" in value:
        yield f"checkpoint_configs[{i}].{key}", value
  for entry in suite.entries:
    values: list[tuple[str, Any]] = list(entry.options.fixed.items())
    values += [(name, v) for name, vs in entry.options.axes.items() for v in vs]
    for name, value in values:
      if isinstance(value, str) and "://" in value:
        yield f"benchmarks[{entry.index}].options.{name}", value


def _reason_unreachable(url: str, output: bool) -> str | None:
  """Why `url` cannot be used from here, or None (an output path need not exist yet)."""
  from etils import epath  # noqa: PLC0415

  def exists() -> bool:
    return epath.Path(url).exists()

  pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
  try:
    found = pool.submit(exists).result(timeout=_TIMEOUT_S)
  except concurrent.futures.TimeoutError:
    return f"no answer within {_TIMEOUT_S:.0f} s"
  except Exception as e:  # noqa: BLE001  (missing client library, credentials, network)
    return f"{type(e).__name__}: {e}"
  finally:
    pool.shutdown(wait=False)
  return None if found or output else "it does not exist"


def check_remote_paths(suite: Suite) -> None:
  """Raises one CkptbenchError naming every object-storage path of `suite` that cannot be read."""
  problems = []
  for where, url in remote_paths(suite):
    reason = _reason_unreachable(url, output="capture" in where)
    if reason:
      problems.append(f"{url} ({where}): {reason}")
  if problems:
    raise CkptbenchError(
        "object storage cannot be reached from this machine: " + "; ".join(problems)
        + ". Copy the data to a local path (or mount the bucket) and give that path instead"
    )
