"""Where each run's checkpoints go: a local directory under OUT, or a prefix in an object store.

With `--checkpoint_root URL` (or `-o URL`) a run's checkpoints go to
URL/<benchmark>/<repeat_k> while results stay local; the run path handed to the
benchmark is then the store's (`ObjectStore.run_path`: an `etils.epath.Path`, which
Orbax and gcsfs/s3fs understand, or a DirectoryStore's local directory).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import os
import pathlib
from typing import Any, Callable, Iterator, Mapping

from ckptbench.api import ErrorRecord, MetricEntry
from ckptbench.api import Tag
from ckptbench.config import catalogue
from ckptbench.errors import CkptbenchError
from ckptbench.metrics import StorageProbe
from ckptbench.storage import (
    StoreRoofline, StoreURL, check_store, clear_location, empty_location, is_store_url, list_objects,
    measure_store, misplaced_bytes, parse_store_url, schemes, store_for,
)

_FILE_BYTES_WRITTEN = "6_tensorstore/kvstore_file_bytes_written"
_BYTES_WRITTEN = "6_tensorstore/kvstore_bytes_written"


def run_location(root: str | os.PathLike, bench_dir: str, run_name: str) -> tuple[Any, StoreURL | None]:
  """The run's path (a pathlib.Path, or an epath.Path on a store) and its store URL (None: local)."""
  if not is_store_url(root):
    return pathlib.Path(root) / bench_dir / run_name, None
  url = parse_store_url(str(root)).join(bench_dir, run_name)
  return store_for(url).run_path(url), url


def store_roofline(root: str) -> StoreRoofline:
  """The store's own kvstore write/read bandwidth below `root`/_roofline (deleted afterwards)."""
  where = parse_store_url(root).join("_ckptbench_roofline")
  try:
    return measure_store(str(where))
  finally:
    clear_location(where)


def roofline_from_dict(data: Mapping[str, Any]) -> StorageProbe | StoreRoofline:
  """The inverse of `dataclasses.asdict` for either kind of roofline (disk or store)."""
  return StoreRoofline(**data) if "store_write_gbps" in data else StorageProbe(**data)


def prepare_location(path: Any, url: StoreURL | None) -> None:
  """An empty place for the run: a fresh directory, or a store prefix with nothing below it."""
  if url is not None:
    empty_location(url)
    return
  _remove_tree(pathlib.Path(path))
  path.mkdir(parents=True)


def remove_location(path: str | os.PathLike) -> None:
  """Deletes a run's checkpoints (`--remove_repeated_dir`, or a partial checkpoint)."""
  if is_store_url(path):
    clear_location(parse_store_url(str(path)))
  else:
    _remove_tree(pathlib.Path(path))


def _remove_tree(root: pathlib.Path) -> None:
  """`shutil.rmtree(root, ignore_errors=True)`, by several threads at once.

  Why: on a journaling filesystem beside another process's fsyncs, each unlink and rmdir waits
  for the journal's commit, and those that wait together share one (beside the verdict trials'
  disk writer, a 16 MiB checkpoint of 13 files took 0.27 s one by one; its 8 directories 0.07 s
  more): rounds of repeats end sooner.
  """
  if not root.is_dir() or root.is_symlink():
    _remove_quietly(os.unlink, str(root))
    return
  walked = list(os.walk(root))
  files = [os.path.join(d, name) for d, _, names in walked for name in names]
  subdirs = [os.path.join(d, s) for d, names, _ in walked for s in names]
  files += [p for p in subdirs if os.path.islink(p)]  # links to directories: os.walk does not enter them
  by_depth: dict[int, list[str]] = {}
  for d, _, _ in walked:
    by_depth.setdefault(d.count(os.sep), []).append(d)
  with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
    list(pool.map(functools.partial(_remove_quietly, os.unlink), files))
    for depth in sorted(by_depth, reverse=True):  # a directory's children are gone before it
      list(pool.map(functools.partial(_remove_quietly, os.rmdir), by_depth[depth]))


def _remove_quietly(remove: Callable[[str], None], path: str) -> None:
  with contextlib.suppress(OSError):
    remove(path)


def placement_error(
    url: StoreURL,
    tags: Mapping[str, MetricEntry],
    local_scratch: bool,
    error: ErrorRecord | None,
) -> ErrorRecord | None:
  """The run's error once we know where its bytes went (see storage._placement).

  A run that put bytes on local disk fails with `MisplacedBytes`, naming the
  benchmark's own error when it raised one too; an empty store fails a run
  that otherwise succeeded and saved (a load-only run rightly writes nothing).
  """
  file_bytes = sum(
      v.value for k, v in tags.items() if k.endswith("_" + _FILE_BYTES_WRITTEN)
  )
  try:
    objects = len(list_objects(url)) if error is None and saved_something(tags) else None
  except Exception as e:  # noqa: BLE001  (the store went away: say so, keep the other runs going)
    return error or ErrorRecord(type(e).__name__, f"cannot list {url} after the run: {e}", "")
  reason = misplaced_bytes(url, objects, file_bytes_written=file_bytes, local_scratch=local_scratch)
  if reason is None:
    return error
  if error is not None:
    reason += f"; the benchmark also failed: {error.type}: {error.message[:300]}"
  return ErrorRecord("MisplacedBytes", reason, error.traceback if error else "")


def saved_something(tags: Mapping[str, MetricEntry]) -> bool:
  """Whether a run wrote a checkpoint: TensorStore wrote bytes, or it timed an operation named as a
  write (`save...`, `...write...`: the built-ins' names and the Orbax guide's)."""
  for name, entry in tags.items():
    tag = Tag.parse(name)
    if tag.key == _BYTES_WRITTEN and entry.value > 0:
      return True
    if tag.key == "0_basics/time_s" and (tag.op.startswith("save") or "write" in tag.op):
      return True
  return False


def check_store_targets(suite: Any, checkpoint_root: str | None, **other_paths: str | None) -> None:
  """Before anything runs: every store the suite names answers, and Orbax can write the scheme.

  Args:
    suite: the loaded suite (its checkpoint configs and benchmark options are checked).
    checkpoint_root: where checkpoints go.
    **other_paths: more places by name (baseline_path=..., output=...).

  Raises:
    CkptbenchError: one line naming every URL that cannot be used, where the
      suite names it, and what to set (exit 2).
  """
  if is_store_url(checkpoint_root):
    url = parse_store_url(checkpoint_root)
    if not store_for(url).orbax_writes:
      builtins = catalogue()
      orbax = sorted(
          e.generator_path for e in suite.entries
          if e.generator_path in builtins and builtins[e.generator_path].saves_only_with_orbax
      )  # fmt: skip
      if orbax:
        writable = " or ".join(f"{s}://" for s in schemes() if store_for(s).orbax_writes)
        others = ", ".join(sorted(b.name for b in builtins.values() if b.saves_with and not b.saves_only_with_orbax))
        raise CkptbenchError(
            f"{url}: orbax-checkpoint cannot write {url.scheme}:// ({orbax[0].rsplit('.', 1)[-1]} saves"
            f" through Orbax, which would put the array data in a local '{url.scheme}:' directory); use a"
            f" {writable} or local --checkpoint_root, or for {url.scheme}:// a built-in that can save through"
            f" another library ({others})"
        )
  named = [("checkpoint_root", checkpoint_root), *other_paths.items(), *_suite_urls(suite)]
  answers: dict[str, str | None] = {}  # one check per URL, however often the suite names it
  problems = []
  for where, url in named:
    if not is_store_url(url):
      continue
    if url not in answers:
      try:
        check_store(parse_store_url(url))
        answers[url] = None
      except CkptbenchError as e:
        answers[url] = str(e)
    if answers[url]:
      problems.append(f"{answers[url]} ({where})")
  if problems:
    raise CkptbenchError("object storage cannot be reached from this machine: " + "; ".join(problems))


def _suite_urls(suite: Any) -> Iterator[tuple[str, str]]:
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
