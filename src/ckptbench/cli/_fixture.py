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

from ckptbench.cli._run import add_suite_arguments, config_path
from ckptbench.cli._units import size_in
from ckptbench.errors import CkptbenchError

FORMATS = ("orbax", "safetensors")


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
  from ckptbench.data import write_fixture  # noqa: PLC0415  (JAX, once its flags are set)

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
