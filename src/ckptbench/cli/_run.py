"""`ckptbench run CONFIG -o OUT`: run a suite."""

from __future__ import annotations

import argparse
import json
import logging
import os
import pathlib
import sys

from ckptbench.cli._compare import add_comparison_arguments
from ckptbench.run._devices import devices_needed, set_xla_flags
from ckptbench.distributed import DISTRIBUTED_MODES, check_colocated_python_supported, initialize, make_coordinator
from ckptbench.errors import CkptbenchError
from ckptbench.storage import is_store_url, parse_store_url, read_object, stop_emulator, upload_directory
from ckptbench.storage._link import link_env, parse_link, start_link
from ckptbench.storage._objects import endpoint_of

# Where `-o gs://...` keeps its results while the run lasts (so --resume works), under the cwd.
STAGING_DIR = ".ckptbench-staging"


def add_suite_arguments(parser: argparse.ArgumentParser) -> None:
  """The config file, both as a positional and the guide's --config_file."""
  parser.add_argument("config", nargs="?", help="the suite YAML file")
  parser.add_argument("--config_file", dest="config_file", help="the suite YAML file (guide form)")
  parser.add_argument("--devices", type=int, help="simulated CPU devices (default: what the meshes need)")


def config_path(args: argparse.Namespace) -> str:
  path = args.config or args.config_file
  if not path:
    raise CkptbenchError("give the suite file: ckptbench run CONFIG -o OUT")
  if args.config and args.config_file and args.config != args.config_file:
    raise CkptbenchError("give the suite file once (positional or --config_file)")
  return path


def register(subparsers) -> None:
  p = subparsers.add_parser("run", help="run a suite", description="Run every benchmark of a suite.")
  add_suite_arguments(p)
  p.add_argument("-o", "--output_directory", "--output-directory", dest="output_directory",
                 help="where results go")  # fmt: skip
  p.add_argument("--checkpoint_root", "--checkpoint-root", dest="checkpoint_root",
                 help="where checkpoints go (gs://BUCKET/PREFIX, s3://..., or a directory) while results"
                 " stay in OUT (default: OUT, or the suite's checkpoint_root)")  # fmt: skip
  p.add_argument("--link", help="shape the way to the store: a local proxy adding latency, capping"
                 " bandwidth, injecting 429/503, e.g. 'rtt=20ms,bw=1GB/s,errors=1%%' (needs the store's"
                 " endpoint set, as `ckptbench emulate` prints)")  # fmt: skip
  p.add_argument("--local_directory", help="host-local scratch directory for benchmarks that need one")
  p.add_argument("--remove_repeated_dir", action="store_true", help="delete each run's directory after it")
  p.add_argument("--enable_hlo_dump", action="store_true", help="dump XLA HLO to OUT/hlo_dump/")
  p.add_argument("--baseline_capture_path", help="write a baseline JSON into this directory")
  p.add_argument("--baseline_path", help="compare against this baseline JSON")
  p.add_argument("--baseline_label", help="name of the captured baseline (default: the git sha)")
  add_comparison_arguments(p)
  p.add_argument("--resume", action="store_true", help="skip runs already in OUT/results.jsonl")
  p.add_argument("--overwrite", action="store_true", help="replace results already in OUT")
  p.add_argument("--distributed", choices=DISTRIBUTED_MODES, default="env",
                 help="multi-process: 'env' reads JAX_COORDINATOR_ADDRESS/JAX_NUM_PROCESSES/JAX_PROCESS_ID"
                 " (default), 'auto' also detects SLURM/Kubernetes/MPI, 'off' runs alone")  # fmt: skip
  p.add_argument("--no-progress", dest="progress", action="store_false", default=None,
                 help="plain log lines instead of a progress bar")  # fmt: skip
  p.add_argument("--no-probe", dest="probe", action="store_false",
                 help="skip measuring the output directory's storage (no roofline shares)")  # fmt: skip
  p.add_argument("--no-views", dest="views", action="store_false",
                 help="skip TensorBoard and the HTML report (write them later with `ckptbench report OUT --tensorboard`)")  # fmt: skip
  p.add_argument("--skip_memory_check", "--skip-memory-check", action="store_true",
                 help="run even when the checkpoint data looks too big for the memory available")  # fmt: skip
  p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
  config_file = config_path(args)
  if not args.output_directory:
    raise CkptbenchError("give the output directory: -o OUT (or --output_directory=OUT)")
  store_out = parse_store_url(args.output_directory) if is_store_url(args.output_directory) else None
  if store_out is not None:  # results are staged locally, then copied beside the checkpoints
    out = (pathlib.Path(STAGING_DIR) / store_out.scheme / store_out.bucket / store_out.prefix).resolve()
  else:
    out = pathlib.Path(args.output_directory).resolve()
  set_xla_flags(
      devices=args.devices or devices_needed(config_file),
      hlo_dump_dir=out / "hlo_dump" if args.enable_hlo_dump else None,
      processes=1 if args.devices else int(os.environ.get("JAX_NUM_PROCESSES", "1")),
      override_devices=bool(args.devices),
  )
  initialize(args.distributed)  # after XLA_FLAGS, before the JAX backend starts
  from ckptbench.config import load_suite  # noqa: PLC0415  (after XLA_FLAGS are set)

  suite = load_suite(config_file)
  baseline_path = args.baseline_path or suite.config.baseline_path
  if baseline_path and "://" not in baseline_path and not pathlib.Path(baseline_path).is_file():
    raise CkptbenchError(f"baseline file {baseline_path} does not exist (checked before running anything)")
  if any(c.config.load_with_colocated_python for c in suite.checkpoints):
    check_colocated_python_supported()
  checkpoint_root = args.checkpoint_root or suite.config.checkpoint_root or (store_out and str(store_out))
  if checkpoint_root and "://" not in checkpoint_root:
    checkpoint_root = str(pathlib.Path(checkpoint_root).resolve())
  capture_path = args.baseline_capture_path or suite.config.baseline_capture_path
  link = start_shaped_link(args.link, checkpoint_root) if args.link else None
  try:
    return _run_checked(args, suite, out, store_out, checkpoint_root, baseline_path, capture_path, link)
  finally:
    if link is not None:
      stop_emulator(link[1])


def start_shaped_link(spec: str, checkpoint_root: str | None):
  """Starts the shaped link to the checkpoint root's store and points this process's clients at it."""
  shape = parse_link(spec)
  if not is_store_url(checkpoint_root):
    raise CkptbenchError("--link shapes the way to an object store: give a gs:// or s3:// checkpoint root")
  url = parse_store_url(checkpoint_root)
  upstream = endpoint_of(url)
  if not upstream:
    variable = "STORAGE_EMULATOR_HOST" if url.scheme == "gs" else "AWS_ENDPOINT_URL"
    raise CkptbenchError(f"--link needs the endpoint of {url} in {variable} (`ckptbench emulate` prints it)")
  link, proc = start_link(upstream, shape)
  os.environ.update(link_env(url.scheme, link.endpoint))  # TensorStore, gcsfs, s3fs and boto3 read these
  return link, proc


def _run_checked(args, suite, out, store_out, checkpoint_root, baseline_path, capture_path, link) -> int:
  from ckptbench.run._locations import check_store_targets  # noqa: PLC0415  (after XLA_FLAGS are set)
  from ckptbench.run._runner import RunSettings, run_suite  # noqa: PLC0415

  check_store_targets(suite, checkpoint_root, baseline_path, capture_path, store_out and str(store_out))
  if is_store_url(baseline_path):
    read_object(baseline_path)  # a missing baseline object fails here, before anything runs
  settings = RunSettings(
      output_dir=out,
      local_directory=pathlib.Path(args.local_directory).resolve() if args.local_directory else None,
      remove_repeated_dir=args.remove_repeated_dir,
      resume=args.resume,
      overwrite=args.overwrite,
      show_progress=args.progress,
      probe_storage=args.probe,
      write_views=args.views,
      check_memory=not args.skip_memory_check,
      argv=tuple(sys.argv),
      checkpoint_root=checkpoint_root,
      link_stats=link[0].stats if link else None,
  )
  _quiet_libraries(args.verbose)
  import jax  # noqa: PLC0415

  jax.config.update("jax_enable_x64", True)
  coordinator = make_coordinator()
  outcome = run_suite(suite, settings, coordinator)
  if coordinator.process_index == 0:  # the others' records are in process 0's tables
    from ckptbench.outputs import print_suite_tables  # noqa: PLC0415

    print_suite_tables(outcome.summary)
    print(f"results: {out}  (report: {out / 'report.html'}, tensorboard --logdir {out / 'tensorboard'})")
  regression = 0
  if coordinator.process_index == 0 and not outcome.interrupted and (capture_path or baseline_path):
    from ckptbench.outputs import finish_baselines  # noqa: PLC0415

    regression = finish_baselines(
        out,
        capture_path=capture_path,
        label=args.baseline_label,
        baseline_path=baseline_path,
        threshold=args.regression_threshold,
        fail_on_regression=args.fail_on_regression,
    )
  if link is not None and coordinator.process_index == 0:
    stats = link[0].stats()
    (out / "link.json").write_text(json.dumps({"shape": link[0].shape.describe(), "stats": stats}, indent=1))
    print(f"link {link[0].shape.describe()}: {stats['requests']} requests, {stats['injected_errors']} injected errors")
  if store_out is not None and coordinator.process_index == 0:
    copied = upload_directory(out, store_out)
    print(f"results copied to {store_out} ({copied} files; staged in {out})")
  return outcome.exit_code or regression  # a failed benchmark (1) wins over a regression (3)


def _quiet_libraries(verbose: bool) -> None:
  if verbose:
    return
  for name in ("absl", "jax", "orbax", "tensorstore"):
    logging.getLogger(name).setLevel(logging.ERROR)
  try:
    from absl import logging as absl_logging  # noqa: PLC0415

    absl_logging.set_verbosity(absl_logging.ERROR)
  except ImportError:
    pass
