"""`RunSettings`: everything `ckptbench run` can be told besides the suite."""

from __future__ import annotations

import dataclasses
import pathlib

from ckptbench.engine._choices import DECIDE_ON
from ckptbench.engine.race._spec import Race
from ckptbench.errors import CkptbenchError
from ckptbench.stats import DEFAULT_THRESHOLD
from ckptbench.storage import is_store_url, parse_store_url, store_for

# Settings whose flag is not `--<field>`.
_FLAGS = {("check_memory", False): "--no_memory_check", ("check_disk", False): "--no_disk_check"}

# Where `-o gs://...` keeps its results while the run lasts (so --resume works), under the cwd.
STAGING_DIR = ".ckptbench-staging"


@dataclasses.dataclass(frozen=True)
class RunSettings:
  """How to run a suite; the `ckptbench run` flags, one field each.

  A run from Python with these settings does what the same flags do on the
  command line (`ckptbench.run(suite, settings)`).
  """

  output_dir: pathlib.Path  # a directory, or gs://... / s3://... (results staged locally, then copied)
  local_directory: pathlib.Path | None = None
  remove_repeated_dir: bool = False  # also remove what a run keeps besides its checkpoint (its artifacts)
  keep_checkpoints: bool = False  # keep every run's checkpoint (else removed once measured; or the suite's key)
  resume: bool = False
  overwrite: bool = False
  show_progress: bool | None = None  # None: a bar on a terminal, lines otherwise
  probe_storage: bool = True  # measure the output directory's storage once (cached) for rooflines
  probe_later: bool = False  # no steady probe cached: leave measuring to the background views process
  write_views: bool = True  # the registered views (TensorBoard, HTML report) at the end
  views_in_background: bool = False  # write them in a detached process after this one exits (views/_background.py)
  check_memory: bool = True  # refuse a suite whose data would not fit in memory (see _memory.py)
  check_disk: bool = True  # refuse a suite whose checkpoints would not fit on disk (see _disk.py)
  argv: tuple[str, ...] = ()
  select: tuple[str, ...] = ()  # `-k`: only the benchmarks matching one of these (see _select.py)
  overrides: tuple[str, ...] = ()  # `--set KEY=VALUE`, applied to a suite file before validation
  # Process set-up, done by `ckptbench.run` before JAX starts (see _process.py).
  devices: int | None = None  # simulated CPU devices; None: what the suite's meshes need
  enable_hlo_dump: bool = False  # XLA HLO into OUT/hlo_dump/
  distributed: str = "env"  # "env", "auto" or "off" (ckptbench.distributed.initialize)
  verbose: bool = False  # leave library logs (absl, jax, orbax, tensorstore) at their levels
  # Native libraries' standard error (AWS SDK, Gloo, glog) into OUT/logs/ unless verbose (_library_output.py).
  capture_library_output: bool = False
  # Baselines after the run; None takes the suite file's key of the same name.
  baseline_path: str | None = None
  baseline_capture_path: str | None = None
  baseline_label: str | None = None
  regression_threshold: float = DEFAULT_THRESHOLD
  fail_on_regression: bool = False
  allow_inconclusive: bool = False  # with fail_on_regression: an inconclusive headline metric passes
  # num_repeats: auto stops adding rounds that would end past this; None: the suite's time_budget_s, else 90 s.
  time_budget_s: float | None = None
  flush_between_runs: bool = True  # os.sync before each run, so earlier checkpoints' writeback is done
  # Object storage (docs/storage.md).
  checkpoint_root: str | None = None  # gs://, s3:// or a directory; None: the suite's key, else OUT
  link: str | None = None  # shape the way to the store, e.g. "rtt=20ms,bw=1GB/s,errors=1%"
  output_url: str | None = None  # set from an output_dir that is a store URL
  # Rounds driven from standard input (engine/loop/_rounds.py): how `ckptbench matrix` interleaves environments.
  driven_rounds: bool = False
  # Host memory (engine/memory/_pass.py): "pass", "inline" or "off"; None: $CKPTBENCH_HOST_MEMORY, else "pass".
  host_memory: str | None = None
  # This run is another run's memory pass: a warm-up and this many runs of each benchmark.
  memory_pass_repeats: int | None = None
  # A memory pass's ends of the pipes that hold its readings until its run's timed runs are done
  # (engine/memory/_gate.py): the file descriptors it writes "warm" to and reads "go" from.
  memory_pass_gate: tuple[int, int] | None = None
  # The memory pass runs in a child forked from this process before JAX's backend starts, not a fresh
  # process (engine/memory/_warm.py): only where this process is ckptbench's own (the command line).
  memory_pass_forked: bool = False
  # Race the grid instead of running it whole (`ckptbench tune`, engine/race/_race.py).
  race: Race | None = None
  # What auto repeats wait for: "verdicts" (each variant against the reference) or "effects" (each factor's
  # main effect and each pair's interaction, analysis/_effects.py; a sweep of one factor has none: its verdicts).
  decide_on: str = "verdicts"

  def ask(self, field: str, value: object = True) -> str:
    """How the caller asks for `field=value`: the flag on the command line (`argv` set), else the keyword."""
    if not self.argv:
      return f"RunSettings({field}={value!r})"
    return _FLAGS.get((field, value), f"--{field}")

  def __post_init__(self):
    if self.decide_on not in DECIDE_ON:
      raise CkptbenchError(f"{self.ask('decide_on', self.decide_on)}: {self.decide_on!r} is none of {list(DECIDE_ON)}")
    for place in (str(self.output_dir), self.checkpoint_root):
      if place and "://" in place:
        store_for(place)  # a scheme no store serves is an error, never a local directory named "xyz:"
    if is_store_url(str(self.output_dir)):  # results are staged locally, then copied beside the checkpoints
      url = parse_store_url(str(self.output_dir))
      object.__setattr__(self, "output_url", str(url))
      object.__setattr__(self, "output_dir", pathlib.Path(STAGING_DIR, url.scheme, url.bucket, url.prefix))
    object.__setattr__(self, "output_dir", pathlib.Path(self.output_dir).resolve())
    if self.checkpoint_root and not is_store_url(self.checkpoint_root):
      object.__setattr__(self, "checkpoint_root", str(pathlib.Path(self.checkpoint_root).resolve()))
    if self.local_directory is not None:
      object.__setattr__(self, "local_directory", pathlib.Path(self.local_directory).resolve())
