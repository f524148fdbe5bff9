"""`ckptbench run CONFIG -o OUT`: run a suite."""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
from typing import TYPE_CHECKING

from ckptbench.cli._compare import add_comparison_arguments
from ckptbench.cli._examples import suite_file
from ckptbench.cli._units import parse_duration
from ckptbench.distributed import DISTRIBUTED_MODES
from ckptbench.engine import DECIDE_ON
from ckptbench.errors import CkptbenchError

if TYPE_CHECKING:
  from ckptbench.config import SimDeviceConfig
  from ckptbench.engine import RunOutcome, RunSettings


def add_suite_arguments(parser: argparse.ArgumentParser) -> None:
  """The config file, both as a positional and the guide's --config_file."""
  parser.add_argument("config", nargs="?", help="the suite YAML file, or the name of an example (`ckptbench examples`)")
  parser.add_argument("--config_file", dest="config_file", help="the suite YAML file (guide form)")
  parser.add_argument("--devices", type=int, help="simulated CPU devices (default: what the meshes need)")
  parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                      help="override a suite key, VALUE in YAML: --set num_repeats=5,"
                      " --set benchmarks[0].options.use_ocdbt=[true]; repeat for several")  # fmt: skip


def add_selection_argument(parser: argparse.ArgumentParser) -> None:
  """-k PATTERN (run and plan)."""
  parser.add_argument("-k", dest="select", action="append", default=[], metavar="PATTERN",
                      help="only benchmarks whose name contains PATTERN (or matches it as a glob, or whose key"
                      " starts with it); repeat for several")  # fmt: skip


def config_path(args: argparse.Namespace) -> str:
  path = args.config or args.config_file
  if not path:
    output = " -o OUT" if "output_directory" in args else ""
    raise CkptbenchError(f"give the suite: ckptbench {args.command} SUITE{output} (a YAML file, or the name of"
                         " an example: `ckptbench examples` lists them)")  # fmt: skip
  if args.config and args.config_file and args.config != args.config_file:
    raise CkptbenchError("give the suite file once (positional or --config_file)")
  return suite_file(path)


def register(subparsers) -> None:
  p = subparsers.add_parser("run", help="run a suite", description="Run every benchmark of a suite.")
  add_suite_arguments(p)
  add_selection_argument(p)
  p.add_argument("-o", "--output_directory", dest="output_directory",
                 help="where results go")  # fmt: skip
  p.add_argument("--checkpoint_root", dest="checkpoint_root",
                 help="where checkpoints go (gs://BUCKET/PREFIX, s3://..., or a directory) while results"
                 " stay in OUT (default: OUT, or the suite's checkpoint_root)")  # fmt: skip
  p.add_argument("--link", help="shape the way to the store: a local proxy adding latency, capping"
                 " bandwidth, injecting 429/503, e.g. 'rtt=20ms,bw=1GB/s,errors=1%%' (needs the store's"
                 " endpoint set, as `ckptbench emulate` prints)")  # fmt: skip
  p.add_argument("--local_directory", help="host-local scratch directory for benchmarks that need one")
  p.add_argument("--remove_repeated_dir", action="store_true",
                 help="delete each run's whole directory after it, the files it keeps for you (such as"
                 " timeline.json) too (checkpoints alone are removed by default)")  # fmt: skip
  p.add_argument("--keep_checkpoints", dest="keep_checkpoints", action="store_true",
                 help="keep every run's checkpoint in OUT (default: each is removed once measured and"
                 " verified, so a suite needs room for its largest checkpoint only)")  # fmt: skip
  p.add_argument("--enable_hlo_dump", action="store_true", help="dump XLA HLO to OUT/hlo_dump/")
  p.add_argument("--baseline_capture_path", help="write a baseline JSON into this directory")
  p.add_argument("--baseline_path", help="compare against this baseline JSON")
  p.add_argument("--baseline_label", help="name of the captured baseline (default: the git sha)")
  add_comparison_arguments(p)
  add_time_budget_argument(p)
  p.add_argument("--decide_on", choices=DECIDE_ON, default="verdicts",
                 help="what num_repeats: auto waits for: 'verdicts' (each variant against the reference, the"
                 " default) or 'effects' (each factor's main effect and each pair's interaction, docs/tuning.md)")  # fmt: skip
  p.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                 help="also a table per benchmark, and library logs (as `ckptbench -v run`)")  # fmt: skip
  p.add_argument("--resume", action="store_true", help="skip runs already in OUT/results.jsonl")
  p.add_argument("--overwrite", action="store_true", help="replace results already in OUT")
  p.add_argument("--driven_rounds", action="store_true", help=argparse.SUPPRESS)  # `matrix`'s (engine/loop/_rounds.py)
  p.add_argument("--with", dest="with_", metavar="REQUIREMENTS",
                 help="run in an isolated environment with these packages, e.g. \"orbax-checkpoint==0.12.7\""
                 " (built with uv and cached; see `ckptbench matrix`)")  # fmt: skip
  p.add_argument("--distributed", choices=DISTRIBUTED_MODES, default="env",
                 help="multi-process: 'env' reads JAX_COORDINATOR_ADDRESS/JAX_NUM_PROCESSES/JAX_PROCESS_ID"
                 " (default), 'auto' also detects SLURM/Kubernetes/MPI, 'off' runs alone")  # fmt: skip
  p.add_argument("--no_progress", dest="progress", action="store_false", default=None,
                 help="plain log lines instead of a progress bar")  # fmt: skip
  p.add_argument("--no_probe", dest="probe", action="store_false",
                 help="skip measuring the output directory's storage (no roofline shares)")  # fmt: skip
  p.add_argument("--no_views", dest="views", action="store_false",
                 help="do not write TensorBoard and the HTML report in the background after the run"
                 " (write them when wanted with `ckptbench report OUT`)")  # fmt: skip
  p.add_argument("--no_memory_check", "--skip_memory_check", dest="check_memory", action="store_false",
                 help="run even when the checkpoint data looks too big for the memory available")  # fmt: skip
  p.add_argument("--host_memory", metavar="pass|inline|off",
                 help="how host memory is measured: 'pass' (default) runs each benchmark again after the timed"
                 " runs, in a fresh process whose allocator keeps no free memory, so a peak does not depend on"
                 " what ran before; 'inline' inside the timed runs (as multi-process runs do); 'off' not at"
                 " all (default: $CKPTBENCH_HOST_MEMORY, else pass; docs/metrics.md)")  # fmt: skip
  _add_memory_pass_arguments(p)
  p.add_argument("--no_disk_check", "--skip_disk_check", dest="check_disk", action="store_false",
                 help="run even when the checkpoints look too big for the free disk")  # fmt: skip
  p.add_argument("--history", metavar="HIST",
                 help="append the finished run to this history (a directory, gs://... or s3://...; docs/history.md)")  # fmt: skip
  p.add_argument("--label", help="the run's label in the history (default: the git commit, -dirty with changes)")
  p.set_defaults(handler=handle, exit_at_once=True)  # see cli._main.main


def _add_memory_pass_arguments(p) -> None:
  """What a run gives the `ckptbench run` that is its memory pass (engine/memory/_pass.py): not for users."""
  p.add_argument("--memory_pass_repeats", type=int, help=argparse.SUPPRESS)
  p.add_argument("--memory_pass_gate", type=_gate_fds, help=argparse.SUPPRESS)  # engine/memory/_gate.py


def _gate_fds(text: str) -> tuple[int, int]:
  """`--memory_pass_gate W,R`: a memory pass's file descriptors (engine/memory/_gate.py)."""
  warm, go = (int(fd) for fd in text.split(","))
  return warm, go


def add_time_budget_argument(p) -> None:
  """`--time_budget`: the budget of num_repeats: auto (run, tune, matrix, bisect)."""
  p.add_argument("--time_budget", "--time_budget_s", dest="time_budget_s", type=parse_duration, metavar="DURATION",
                 help="with num_repeats: auto (the default for sweeps, baseline comparisons, matrix and bisect),"
                 " start no round that would end past this time, e.g. 90s or 5m (default: the suite's"
                 " time_budget_s, else 300s)")  # fmt: skip


def settings_from(args: argparse.Namespace) -> RunSettings:
  """The `ckptbench run` flags as RunSettings."""
  from ckptbench.engine import RunSettings  # noqa: PLC0415  (JAX starts once the process is set up)

  # In a terminal the prompt comes back while a detached process writes the views; piped (CI,
  # a script) the run writes them before it exits, so whatever archives OUT next finds them.
  background = args.views and sys.stdout.isatty()
  return RunSettings(
      output_dir=args.output_directory,
      local_directory=args.local_directory and pathlib.Path(args.local_directory),
      remove_repeated_dir=args.remove_repeated_dir,
      keep_checkpoints=args.keep_checkpoints,
      resume=args.resume,
      overwrite=args.overwrite,
      show_progress=args.progress,
      probe_storage=args.probe,
      probe_later=background,  # an uncached probe is measured by the background views process
      write_views=args.views,
      views_in_background=background,  # a detached process writes them after this one exits (views/_background.py)
      check_memory=args.check_memory,
      check_disk=args.check_disk,
      argv=tuple(sys.argv),
      select=tuple(args.select),
      overrides=tuple(args.overrides),
      devices=args.devices,
      enable_hlo_dump=args.enable_hlo_dump,
      distributed=args.distributed,
      verbose=args.verbose,
      capture_library_output=True,  # into OUT/logs/ (unless -v)
      baseline_path=args.baseline_path,
      baseline_capture_path=args.baseline_capture_path,
      baseline_label=args.baseline_label,
      regression_threshold=args.regression_threshold,
      fail_on_regression=args.fail_on_regression,
      allow_inconclusive=args.allow_inconclusive,
      time_budget_s=args.time_budget_s,
      decide_on=args.decide_on,
      checkpoint_root=args.checkpoint_root,
      link=args.link,
      driven_rounds=args.driven_rounds,
      host_memory=args.host_memory,
      memory_pass_repeats=args.memory_pass_repeats,
      memory_pass_gate=args.memory_pass_gate,
      memory_pass_forked=args.own_process,
  )


def handle(args: argparse.Namespace) -> int:
  if args.with_:  # the same command, in an isolated environment with those packages
    from ckptbench.envs import run_with  # noqa: PLC0415

    return run_with(args.with_, args.argv)
  config = config_path(args)
  if not args.output_directory:
    raise CkptbenchError("give the output directory: -o OUT (or --output_directory=OUT)")
  if args.label is not None and args.history is None:
    raise CkptbenchError("--label names the run in a history: give --history HIST too")
  history = None
  if args.history is not None:
    from ckptbench.history import HistoryStore  # noqa: PLC0415

    history = HistoryStore(args.history)  # a wrong location fails now, not after the run
  from ckptbench.config import read_simdevice  # noqa: PLC0415

  simdevice = read_simdevice(config, args.overrides)
  if simdevice is not None and simdevice.num_processes > 1 and "JAX_PROCESS_ID" not in os.environ:
    return _run_simulated_hosts(simdevice, args)
  if os.environ.get("JAX_PROCESS_ID", "0") == "0":  # one process of a job speaks
    # Starting JAX and loading the suite take seconds on a busy machine: say something first.
    print(f"ckptbench run {config}: starting (results in {args.output_directory})", flush=True)
  from ckptbench.engine import pause_while_starting  # noqa: PLC0415

  pause_while_starting()  # JAX, Orbax and the suite leave ~235,000 objects, 1,360 of them garbage: walked for little
  from ckptbench.engine import run  # noqa: PLC0415

  settings = settings_from(args)
  outcome = run(config, settings)
  if outcome.is_writer:  # the others' records are in process 0's tables
    print_run(outcome, detail=args.verbose, views=args.views, background=settings.views_in_background)
    if history is not None and not outcome.interrupted:
      from ckptbench.history import entry_from_outputs  # noqa: PLC0415

      print(f"history: added {history.append(entry_from_outputs(outcome.output_dir, args.label))}", flush=True)
  return outcome.exit_code


def _run_simulated_hosts(simdevice: SimDeviceConfig, args: argparse.Namespace) -> int:
  """A `simdevice:` suite with several processes: this command again as each of them, as Orbax's
  runner starts its simulated hosts (one jax.distributed job on 127.0.0.1, the chips split evenly)."""
  from ckptbench.distributed import launch_local  # noqa: PLC0415

  run_args = args.argv[args.argv.index("run") + 1 :]
  per_process = simdevice.num_devices // simdevice.num_processes
  print(f"ckptbench run: simdevice {simdevice.describe()}: {simdevice.num_processes} local processes x"
        f" {per_process} CPU devices", flush=True)  # fmt: skip
  try:
    outcome = launch_local(simdevice.num_processes, run_args, devices_per_process=per_process)
  except KeyboardInterrupt:
    print("ckptbench: error: run interrupted; stopped every process", file=sys.stderr)
    return 130
  if outcome.exit_code:
    print(f"ckptbench: error: {outcome.message}", file=sys.stderr)
  return outcome.exit_code


def print_run(outcome: RunOutcome, detail: bool = False, views: bool = True, background: bool = False) -> None:
  """The console's view of a finished run: the verdict first, the baseline verdicts, where the files are.

  Args:
    outcome: the finished run.
    detail: also a table per benchmark (`-v`).
    views: whether the views were written.
    background: they are being written by a detached process (said on the last line).
  """
  from ckptbench.views import print_comparison, print_suite_tables  # noqa: PLC0415

  out = outcome.output_dir
  print_suite_tables(outcome.summary, records=outcome.records, detail=detail)
  files = f"report {out / 'report.html'} and tensorboard --logdir {out / 'tensorboard'}"
  background = background and views and outcome.uploaded_to is None  # an upload carries them, written
  if not views:
    print(f"results: {out}  (no views; `ckptbench report {out}` writes {files})")
  elif not background:
    print(f"results: {out}  ({files})")
  else:
    print(f"results: {out}")
  if outcome.captured_baseline is not None:
    print(f"baseline captured: {outcome.captured_baseline}")
  if outcome.comparison is not None:
    repeats = outcome.summary.repeats or {}
    print_comparison(outcome.comparison, repeated_until_decided=repeats.get("mode") == "auto")
  if outcome.link is not None:
    stats = outcome.link["stats"]
    print(f"link {outcome.link['shape']}: {stats['requests']} requests, {stats['injected_errors']} injected errors")
  if outcome.library_log_lines:
    print(f"library messages: {outcome.library_log_lines} lines in {outcome.library_log} (-v shows them here)")
  if outcome.uploaded_to is not None:
    print(f"results copied to {outcome.uploaded_to} ({outcome.uploaded_files} files; staged in {out})")
  if background:
    print(f"views: {files}: being written in the background after this prompt returns (log"
          f" {out / 'views.log'}; `ckptbench report {out}` writes them now)")
