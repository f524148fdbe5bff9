"""`RunSettings`: everything `ckptbench run` can be told besides the suite."""

from __future__ import annotations

import dataclasses
import pathlib

from ckptbench.stats import DEFAULT_THRESHOLD


@dataclasses.dataclass(frozen=True)
class RunSettings:
  """How to run a suite; the `ckptbench run` flags, one field each.

  A run from Python with these settings does what the same flags do on the
  command line (`ckptbench.run(suite, settings)`).
  """

  output_dir: pathlib.Path
  local_directory: pathlib.Path | None = None
  remove_repeated_dir: bool = False
  resume: bool = False
  overwrite: bool = False
  show_progress: bool | None = None  # None: a bar on a terminal, lines otherwise
  probe_storage: bool = True  # measure the output directory's storage once (cached) for rooflines
  write_views: bool = True  # the registered views (TensorBoard, HTML report) at the end
  check_memory: bool = True  # refuse a suite whose data would not fit in memory (see _memory.py)
  argv: tuple[str, ...] = ()
  # Process set-up, done by `ckptbench.run` before JAX starts (see _process.py).
  devices: int | None = None  # simulated CPU devices; None: what the suite's meshes need
  enable_hlo_dump: bool = False  # XLA HLO into OUT/hlo_dump/
  distributed: str = "env"  # "env", "auto" or "off" (ckptbench.distributed.initialize)
  verbose: bool = False  # leave library logs (absl, jax, orbax, tensorstore) at their levels
  # Baselines after the run; None takes the suite file's key of the same name.
  baseline_path: str | None = None
  baseline_capture_path: str | None = None
  baseline_label: str | None = None
  regression_threshold: float = DEFAULT_THRESHOLD
  fail_on_regression: bool = False

  def __post_init__(self):
    object.__setattr__(self, "output_dir", pathlib.Path(self.output_dir).resolve())
    if self.local_directory is not None:
      object.__setattr__(self, "local_directory", pathlib.Path(self.local_directory).resolve())
