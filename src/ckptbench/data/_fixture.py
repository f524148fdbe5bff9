"""Fixtures: a suite's synthetic checkpoint data written before its runs (`ckptbench fixture`, and `run` when
the suite's `fixture:` is missing), as an Orbax checkpoint or Hugging Face-style safetensors files, with
its sharding files.

The directory keeps a stamp (fixture.json) of what was written: the checkpoint config, the mesh, the format
and the file size. A later run whose suite asks for the same reuses the files; one that asks for other
data has them written again (a stale fixture would load other data than the suite names).
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import shutil
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ckptbench.errors import CkptbenchError

if TYPE_CHECKING:
  from ckptbench.config import Suite

STAMP = "fixture.json"
_FILES = ("sharding.json", "abstract_state.json", STAMP)


def fixture_identity(suite: Suite, fmt: str, shard_mb: float) -> dict[str, Any]:
  """What a fixture of `suite` holds: its first checkpoint config and mesh, the format, the file size."""
  source = suite.checkpoints[0] if suite.checkpoints else None
  mesh = suite.meshes[0] if suite.meshes else None
  return {
      "checkpoint_config": None if source is None else source.config.identity(),
      "mesh": None if mesh is None else mesh.identity(),
      "format": fmt,
      **({"shard_mb": shard_mb} if fmt == "safetensors" else {}),
  }


def fixture_key(identity: dict[str, Any]) -> str:
  return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def stamped_key(output_dir: str | pathlib.Path) -> str | None:
  """The key of the fixture written in `output_dir`, or None (none written, or not by this version)."""
  try:
    stamp = json.loads((pathlib.Path(output_dir) / STAMP).read_text())
  except (OSError, ValueError):
    return None
  return stamp.get("key") if isinstance(stamp, dict) else None


def remove_fixture(output_dir: str | pathlib.Path) -> None:
  """Removes what `write_fixture` wrote in `output_dir` (and nothing else there)."""
  out = pathlib.Path(output_dir)
  for name in ("checkpoint", "safetensors"):
    shutil.rmtree(out / name, ignore_errors=True)
  for name in _FILES:
    (out / name).unlink(missing_ok=True)


def write_fixture(
    suite: Suite | str,
    output_dir: str | pathlib.Path,
    fmt: str = "orbax",
    shard_mb: float = 64.0,
    overrides: Sequence[str] = (),
) -> dict[str, Any]:
  """Writes OUTPUT_DIR/checkpoint (or OUTPUT_DIR/safetensors), OUTPUT_DIR/sharding.json,
  OUTPUT_DIR/abstract_state.json (Orbax's format) and the stamp; returns what it wrote.

  `suite` is a loaded suite or a suite file; `overrides` are `--set KEY=VALUE` edits of a suite file.

  Raises:
    CkptbenchError: when the suite has no spec or preset, or the checkpoint exists.
  """
  from orbax.checkpoint import v1 as ocp  # noqa: PLC0415

  from ckptbench.data._existing import write_sharding_config  # noqa: PLC0415
  from ckptbench.data._mesh import build_mesh  # noqa: PLC0415
  from ckptbench.data._safetensors import safetensors_name, write_safetensors  # noqa: PLC0415
  from ckptbench.data._synthetic import build_pytree  # noqa: PLC0415

  if isinstance(suite, str):
    from ckptbench.config import load_suite  # noqa: PLC0415

    suite = load_suite(suite, overrides)
  source = suite.checkpoints[0] if suite.checkpoints else None
  if source is None or source.spec is None:
    raise CkptbenchError(f"{suite.file}: fixture needs a checkpoint_config with a spec or a preset")
  out = pathlib.Path(output_dir)
  checkpoint = out / ("checkpoint" if fmt == "orbax" else "safetensors")
  if checkpoint.exists():
    raise CkptbenchError(f"{checkpoint} exists; remove it or choose another output directory")
  identity = fixture_identity(suite, fmt, shard_mb)
  out.mkdir(parents=True, exist_ok=True)
  mesh_config = suite.meshes[0] if suite.meshes else None
  mesh = None if mesh_config is None else build_mesh(mesh_config)
  source, _ = source.on_mesh(mesh_config)  # a preset replicates the axes the mesh lacks
  pytree = build_pytree(source.spec, mesh, seed=source.config.random_seed, fill=source.config.fill)
  if fmt == "orbax":
    ocp.save(checkpoint, pytree)
    write_sharding_config(out / "sharding.json", pytree)
    write_sharding_config(out / "abstract_state.json", pytree, layout="orbax")
  else:
    write_safetensors(pytree, checkpoint, int(shard_mb * (1 << 20)))
    write_sharding_config(out / "sharding.json", pytree, name_of=safetensors_name)
    write_sharding_config(out / "abstract_state.json", pytree, name_of=safetensors_name, layout="orbax")
  (out / STAMP).write_text(json.dumps({"key": fixture_key(identity), **identity}, indent=1))
  return {
      "format": fmt,
      "checkpoint": str(checkpoint.resolve()),
      "sharding": str((out / "sharding.json").resolve()),
      "orbax_sharding": str((out / "abstract_state.json").resolve()),
      "mesh": None if mesh_config is None else mesh_config.describe(),
      "checkpoint_config": source.config.describe(),
  }


def ensure_fixture(suite: Suite, processes: int, say: Callable[[str], None]) -> None:
  """Writes the suite's fixture (`fixture:`) where it reads it, unless the same one is there already.

  A fixture written by another version (no stamp) or by hand is trusted as it is. One process writes:
  a job of several is refused, naming the command that writes it first.

  Raises:
    CkptbenchError: a missing fixture in a job of several processes, or one that cannot be written.
  """
  declared = suite.config.fixture
  if declared is None:
    return
  key = fixture_key(fixture_identity(suite, declared.format, declared.shard_mb))
  found = stamped_key(declared.directory)
  if os.path.exists(declared.written) and found in (None, key):
    return
  if processes > 1:
    raise CkptbenchError(f"{suite.file}: {declared.written} does not exist or holds other data: write it first"
                         f" with `{declared.command(suite.file)}`")  # fmt: skip
  changed = os.path.exists(declared.written)
  if changed:
    remove_fixture(declared.directory)
  started = time.monotonic()
  written = write_fixture(suite, declared.directory, declared.format, declared.shard_mb)
  say(f"fixture: wrote {written['checkpoint_config']} on {written['mesh'] or 'one device'} to {declared.written}"
      f" in {time.monotonic() - started:.1f} s{' (the suite asks for other data than was there)' if changed else ''};"
      " later runs reuse it")  # fmt: skip
