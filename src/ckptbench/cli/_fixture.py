"""`ckptbench fixture CONFIG -o DIR`: write a reference checkpoint and its sharding file.

Builds the suite's first checkpoint data (a `spec` or a `preset`) on its first
mesh, saves it with Orbax as DIR/checkpoint and writes DIR/sharding.json (the
sharding-file format of `checkpoint_config.sharding_config_path` and of the
built-ins' `reference_sharding_path`) and DIR/abstract_state.json (the same in
the format Orbax's load benchmarks read, for modules ported from Orbax's
framework). A load benchmark can then read a
checkpoint written before the run, as on a real cluster.

With `--format safetensors` it writes DIR/safetensors/ instead: Hugging
Face-style sharded `.safetensors` files and their index (the input of
`safetensors_load`, with no download from the Hub), and a sharding file keyed
by the safetensors tensor names.
"""

from __future__ import annotations

import argparse
import json
import pathlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ckptbench.cli._run import add_suite_arguments, config_path
from ckptbench.cli._units import size_in
from ckptbench.errors import CkptbenchError

if TYPE_CHECKING:
  from ckptbench.config import Suite


def register(subparsers) -> None:
  p = subparsers.add_parser(
      "fixture",
      help="write a reference checkpoint + sharding file",
      description="Save a suite's synthetic checkpoint data (spec or preset) as a reference checkpoint.",
  )
  add_suite_arguments(p)
  p.add_argument("-o", "--output_directory", dest="output_directory",
                 help="where DIR/checkpoint and DIR/sharding.json go (default: the suite's fixture.directory)")  # fmt: skip
  p.add_argument("--format", choices=FORMATS,
                 help="orbax: DIR/checkpoint; safetensors: sharded DIR/safetensors/*.safetensors"
                      " (default: the suite's fixture.format, else orbax)")  # fmt: skip
  p.add_argument("--shard_size", "--shard_mb", dest="shard_bytes", type=size_in("MiB"),
                 help="safetensors: the size of each file, e.g. 64MiB (a larger tensor gets a file of its own;"
                      " default: the suite's fixture.shard_mb, else 64MiB)")  # fmt: skip
  p.set_defaults(handler=handle)


FORMATS = ("orbax", "safetensors")


def write_fixture(
    suite: Suite | str,
    output_dir: str | pathlib.Path,
    fmt: str = "orbax",
    shard_mb: float = 64.0,
    overrides: Sequence[str] = (),
) -> dict[str, Any]:
  """Writes OUTPUT_DIR/checkpoint (or OUTPUT_DIR/safetensors), OUTPUT_DIR/sharding.json and
  OUTPUT_DIR/abstract_state.json (Orbax's format).

  `suite` is a loaded suite or a suite file; `overrides` are `--set KEY=VALUE`
  edits of a suite file. Returns what it wrote.

  Raises:
    CkptbenchError: when the suite has no spec or preset, or the checkpoint exists.
  """
  from orbax.checkpoint import v1 as ocp

  from ckptbench.config import load_suite
  from ckptbench.data import build_mesh, build_pytree, safetensors_name, write_safetensors, write_sharding_config

  if isinstance(suite, str):
    suite = load_suite(suite, overrides)
  source = suite.checkpoints[0] if suite.checkpoints else None
  if source is None or source.spec is None:
    raise CkptbenchError(f"{suite.file}: fixture needs a checkpoint_config with a spec or a preset")
  out = pathlib.Path(output_dir)
  checkpoint = out / ("checkpoint" if fmt == "orbax" else "safetensors")
  if checkpoint.exists():
    raise CkptbenchError(f"{checkpoint} exists; remove it or choose another output directory")
  out.mkdir(parents=True, exist_ok=True)
  mesh_config = suite.meshes[0] if suite.meshes else None
  mesh = None if mesh_config is None else build_mesh(mesh_config)
  source, _ = source.on_mesh(mesh_config)  # a preset replicates the axes the mesh lacks
  pytree = build_pytree(
      source.spec, mesh, seed=source.config.random_seed, fill=source.config.fill
  )
  if fmt == "orbax":
    ocp.save(checkpoint, pytree)
    write_sharding_config(out / "sharding.json", pytree)
    write_sharding_config(out / "abstract_state.json", pytree, layout="orbax")
  else:
    write_safetensors(pytree, checkpoint, int(shard_mb * (1 << 20)))
    write_sharding_config(out / "sharding.json", pytree, name_of=safetensors_name)
    write_sharding_config(out / "abstract_state.json", pytree, name_of=safetensors_name, layout="orbax")
  return {
      "format": fmt,
      "checkpoint": str(checkpoint.resolve()),
      "sharding": str((out / "sharding.json").resolve()),
      "orbax_sharding": str((out / "abstract_state.json").resolve()),
      "mesh": None if mesh_config is None else mesh_config.describe(),
      "checkpoint_config": source.config.describe(),
  }


def handle(args: argparse.Namespace) -> int:
  from ckptbench.engine import set_xla_flags  # noqa: PLC0415

  config_file = config_path(args)
  from ckptbench.config import load_suite  # noqa: PLC0415

  suite = load_suite(config_file, args.overrides)  # touches no device: JAX's flags are not set yet
  declared = suite.config.fixture  # what the suite's run expects (`fixture:`)
  output_directory = args.output_directory or (declared and declared.directory)
  if not output_directory:
    raise CkptbenchError("give the output directory: -o DIR (the suite declares no fixture.directory)")
  fmt = args.format or (declared.format if declared else "orbax")
  shard_mb = args.shard_bytes / (1 << 20) if args.shard_bytes else (declared.shard_mb if declared else 64.0)
  set_xla_flags(devices=args.devices or suite.devices_needed, hlo_dump_dir=None, override_devices=bool(args.devices))
  written = write_fixture(suite, output_directory, fmt, shard_mb)
  print(json.dumps(written, indent=1))
  if declared is not None and (output_directory, fmt) == (declared.directory, declared.format):
    print(f"written where the suite reads it: ckptbench run {config_file} -o OUT")
    return 0
  if fmt == "safetensors":
    print(
        "use it with:\n  options:\n"
        f"    checkpoint_path: {written['checkpoint']}\n"
        f"    sharding_config_path: {written['sharding']}"
    )
    return 0
  print(
      "use it with:\n  options:\n"
      f"    reference_checkpoint_path: {written['checkpoint']}\n"
      f"    reference_sharding_path: {written['sharding']}"
  )
  return 0
