"""`ckptbench scale SUITE --hosts 1,2,4,8,16 -o OUT`: what grows with hosts, and where it breaks."""

from __future__ import annotations

import argparse
import pathlib
import sys

from typing import TYPE_CHECKING

from ckptbench.cli._examples import suite_file
from ckptbench.cli._run import add_selection_argument
from ckptbench.cli._units import parse_duration, size_in
from ckptbench.errors import CkptbenchError

if TYPE_CHECKING:
  from ckptbench.stats import StoreProfile


def _counts(text: str) -> tuple[int, ...]:
  parts = [p.strip() for p in text.split(",") if p.strip()]
  if not parts or not all(p.isdigit() and int(p) >= 1 for p in parts):
    raise argparse.ArgumentTypeError(f"expected host counts such as 1,2,4,8, got {text!r}")
  return tuple(int(p) for p in parts)


def _store_argument(text: str) -> StoreProfile:
  from ckptbench.engine import store_profile  # noqa: PLC0415  (the command line starts without numpy)

  try:
    return store_profile(text)
  except CkptbenchError as e:  # argparse prints it as one line and exits 2
    raise argparse.ArgumentTypeError(str(e)) from None


def register(subparsers) -> None:
  p = subparsers.add_parser(
      "scale",
      help="run a suite at several host counts (emulated hosts here) and predict larger ones",
      description=(
          "Runs the suite's benchmarks at each host count as processes on this machine (one"
          " jax.distributed job each, every process through its own shaped link to the store),"
          " records the exact counts (requests by kind, files, bytes per host, barriers, metadata)"
          " and the times, fits a growth law to each, and predicts the --predict host counts on a"
          " store profile: OUT/scale.json, OUT/scale.html. See docs/scale.md."
      ),
  )
  p.add_argument("config", help="the suite YAML file, or an example's name (its mesh is one host's, which sets"
                 " the devices of each)")  # fmt: skip
  add_selection_argument(p)
  p.add_argument("--hosts", type=_counts, required=True, help="host counts to run, e.g. 1,2,4,8,16")
  mode = p.add_mutually_exclusive_group()
  mode.add_argument("--weak", dest="mode", action="store_const", const="weak", help="keep each host's shard (default)")
  mode.add_argument("--strong", dest="mode", action="store_const", const="strong", help="keep the whole checkpoint")
  p.add_argument("--predict", type=_counts, default=(256, 1024, 4096), help="host counts to predict (default 256,1024,4096)")
  p.add_argument("-o", "--output_directory", dest="output_directory", required=True)
  p.add_argument("--axis", default="fsdp", help="the mesh axis hosts are added along (default fsdp)")
  p.add_argument("--link", default="rtt=0ms", help="the shaped link of every process (default rtt=0ms: counts only)")
  p.add_argument("--checkpoint_root", help="gs:// or s3:// root of the checkpoints (default: the suite's)")
  p.add_argument("--emulate", choices=("gcs", "s3"), help="start a local emulator of this store for the run")
  p.add_argument("--store", type=_store_argument, default="gcs",
                 help="target store profile: gcs, s3, or a JSON file of its fields (default gcs)")
  p.add_argument("--store_from", metavar="OUT", help="take the profile's latency from a run of the storage"
                 " built-in in OUT (its write time per wave of requests in flight)")
  p.add_argument("--save_interval", type=parse_duration, default=60.0, help="the save interval the limits use (default 60s)")
  p.add_argument("--memory_per_host", "--host_memory_gib", dest="memory_per_host", type=size_in("GiB"),
                 help="one target host's memory, e.g. 64GiB (default: this machine's)")
  p.add_argument("--fit_from", type=int, default=1, help="fit the laws to host counts from this one on"
                 " (default 1; cross-host steps such as barriers are fitted from 2 hosts on); a law needs"
                 " 3 host counts from there, and scale refuses with fewer")
  p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
  again = p.add_mutually_exclusive_group()
  again.add_argument("--overwrite", action="store_true", help="replace results already in OUT")
  again.add_argument("--resume", action="store_true", help="reuse the host counts an earlier scale into OUT finished")
  p.set_defaults(handler=_handle, mode="weak")


def _handle(args: argparse.Namespace) -> int:
  from ckptbench.engine import ScaleSettings, measured_latency, scale  # noqa: PLC0415  (JAX-free start)
  from ckptbench.views import scale_as_text, write_scale_page  # noqa: PLC0415

  store = measured_latency(args.store, args.store_from) if args.store_from else args.store
  settings = ScaleSettings(
      suite=suite_file(args.config), output_dir=pathlib.Path(args.output_directory), hosts=args.hosts, mode=args.mode,
      axis=args.axis, targets=args.predict, link=args.link, checkpoint_root=args.checkpoint_root,
      emulate=args.emulate, store=store, save_interval_s=args.save_interval,
      host_memory_mib=None if args.memory_per_host is None else args.memory_per_host / (1 << 20),
      overrides=tuple(args.overrides), select=tuple(args.select), overwrite=args.overwrite, resume=args.resume, fit_from=args.fit_from,
  )  # fmt: skip
  doc = scale(settings, sys.stdout)
  print(scale_as_text(doc))
  page = write_scale_page(doc, settings.output_dir)
  print(f"\nwritten: {settings.output_dir / 'scale.json'}, {page}")
  return 0
