"""The target store's profile for `scale`: a built-in one, a JSON file of its fields, or a
built-in one with the per-request latency a `storage` run measured."""

from __future__ import annotations

import dataclasses
import math
import pathlib
import statistics

from ckptbench.api import SchemaError, finite_number, timed_runs
from ckptbench.errors import CkptbenchError
from ckptbench.results import read_document, read_records
from ckptbench.stats import PROFILES, StoreProfile

_STORAGE = "ckptbench.benchmarks.storage.StorageBenchmark"


def store_profile(text: str) -> StoreProfile:
  """A built-in profile's name, or a JSON file of a profile's fields (`base` names the one it changes).

  Raises:
    CkptbenchError: an unknown name, or a file that cannot be read, naming the file and the field.
  """
  if text in PROFILES:
    return PROFILES[text]
  path = pathlib.Path(text)
  if not path.is_file():
    raise CkptbenchError(f"--store {text!r}: neither a profile ({', '.join(PROFILES)}) nor a JSON file")
  try:
    fields = read_document(path)
    base = PROFILES[fields.pop("base", "gcs")]
  except (KeyError, TypeError, AttributeError) as e:
    raise CkptbenchError(f"{path}: not a store profile ({e}); write e.g. "
                         '{"base": "gcs", "latency_s": 0.02, "write_requests_per_s": 2000}') from None  # fmt: skip
  known = {f.name for f in dataclasses.fields(StoreProfile)}
  unknown = sorted(set(fields) - known)
  if unknown:
    raise CkptbenchError(f"{path}: unknown field {unknown[0]!r}; fields are {', '.join(sorted(known))}")
  for name, value in fields.items():  # the model multiplies these: each a finite number where the profile's is
    if isinstance(getattr(base, name), (int, float)) and not isinstance(getattr(base, name), bool):
      try:
        fields[name] = finite_number(value, name)
      except SchemaError as e:
        raise CkptbenchError(f"{path}: {e}") from None
  return dataclasses.replace(base, **{"name": path.stem, "source": str(path), **fields})


def measured_latency(profile: StoreProfile, out_dir: str | pathlib.Path) -> StoreProfile:
  """`profile` with the latency a `storage` run in `out_dir` measured: the median write time per
  wave of requests in flight (`object_count / concurrency` waves), over its runs without OCDBT.
  Small objects make this the round trip; large ones add their transfer time.

  Raises:
    CkptbenchError: `out_dir` holds no successful `storage` run without OCDBT.
  """
  per_wave = []
  for r in timed_runs(read_records(out_dir)):
    if r.generator == _STORAGE and not r.failed and not r.options.get("use_ocdbt"):
      waves = math.ceil(r.options["object_count"] / r.options["concurrency"])
      per_wave.append(r.value("write_0_basics/time_s") / waves)
  if not per_wave:
    raise CkptbenchError(f"--store_from {out_dir}: no successful run of the storage built-in without OCDBT there")
  latency = statistics.median(per_wave)
  source = (f"latency {latency * 1e3:.3g} ms: the storage built-in's write time per wave of requests in"
            f" {out_dir} (median of {len(per_wave)} runs); rates: {profile.source}")  # fmt: skip
  return dataclasses.replace(profile, latency_s=latency, source=source)
