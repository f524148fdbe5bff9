"""Test set-up: 8 simulated CPU devices for in-process JAX, set before JAX starts."""

from __future__ import annotations

import collections
import contextlib
import os
import pathlib
import signal
import subprocess
import sys
import tempfile

os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
).strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# A pytest-xdist worker (make test) has COLUMNS=80 and LINES=24 in its environment, which a plain
# pytest process has not: a `ckptbench` started from a test would then fold its tables at 80
# columns, as at a small terminal, instead of printing them at its width for logs and pipes.
if "PYTEST_XDIST_WORKER" in os.environ:
  os.environ.pop("COLUMNS", None)
  os.environ.pop("LINES", None)

import pytest  # noqa: E402

from warm_cli import run_cli_forked  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent
CHROMEDRIVER = "/usr/bin/chromedriver"


@contextlib.contextmanager
def headless_chromium():
  """Debian's Chromium, headless and offline, keeping the page's console log: where pages are checked."""
  webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (the dev extra)")
  from selenium.webdriver.chrome.service import Service

  # Its profile in a folder removed afterwards: the one chromedriver makes itself stays behind in /tmp.
  with tempfile.TemporaryDirectory(prefix="ckptbench-chromium-") as profile:
    options = webdriver.ChromeOptions()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--window-size=1400,1800",
                 f"--user-data-dir={profile}"):  # fmt: skip
      options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
      yield driver
    finally:
      driver.quit()


HOST_MEMORY_ENV = "CKPTBENCH_HOST_MEMORY"  # engine/memory/_pass_choices.py


def pytest_configure(config):
  """Ctrl-C as a terminal gives it. A shell starts a background job (`make test &`) with SIGINT and SIGQUIT
  ignored (POSIX, for asynchronous lists), every process started from here would inherit SIGINT ignored,
  and the tests that press Ctrl-C on `ckptbench launch` (which leaves SIGINT to Python) would see the
  command go on to its end."""
  if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
  """Tests run what users run: host memory from a memory pass (engine/memory/_pass.py). A test (or a
  file, with `pytestmark`) that needs another way says so and why, with
  `@pytest.mark.host_memory("inline" | "off", reason=...)`; it holds for the processes the test starts
  and for the module's fixtures set up with it. Set before any fixture, so a developer's own
  $CKPTBENCH_HOST_MEMORY never decides."""
  marker = item.get_closest_marker("host_memory")
  if marker is None:
    os.environ.pop(HOST_MEMORY_ENV, None)
    return
  if len(marker.args) != 1 or not marker.kwargs.get("reason"):
    raise pytest.UsageError(f"{item.nodeid}: host_memory(mode, reason=...) needs its mode and its reason")
  os.environ[HOST_MEMORY_ENV] = marker.args[0]


# The files that took longest in the last profile (`--durations`, docs/performance.md, *The test suite*),
# longest first: one of them handed out last would run on alone after the other workers finish.
_LONGEST_FILES_FIRST = ("test_example_walk.py", "test_storage.py", "test_effects_run.py", "test_orbax_suites.py",
                        "test_envs.py", "test_builtins_torchax.py", "test_reproductions.py", "test_docs.py",
                        "test_launch.py", "test_history.py", "test_builtins_multislice.py", "test_memory_pass.py")  # fmt: skip


def pytest_collection_modifyitems(items):
  """The longest files first, then those with the most slow tests, each file's tests in their order.

  `make test` hands whole files to its workers in this order (pytest-xdist, --dist loadfile): the
  long files start first rather than last, so the workers finish together. A name no longer there is
  ignored; a new file falls in by its number of slow tests.
  """
  slow = collections.Counter(item.path for item in items if item.get_closest_marker("slow"))
  first_seen = {path: i for i, path in enumerate(dict.fromkeys(item.path for item in items))}
  longest = {name: i for i, name in enumerate(_LONGEST_FILES_FIRST)}
  items.sort(key=lambda item: (longest.get(item.path.name, len(longest)), -slow[item.path], first_seen[item.path]))


_WALK = "tests/test_example_walk.py::"


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: an environment without it runs the tests in one process
def pytest_xdist_make_scheduler(config, log):
  """`--dist loadfile`, but each example of the catalogue walk (tests/test_example_walk.py) goes to whichever
  worker is free, as a file of its own: the walk's examples spread over the workers, alone (`make
  test-examples`) or among the suite's files (`make test WITH_EXAMPLES=1`)."""
  if config.getvalue("dist") != "loadfile":
    return None
  from xdist.scheduler import LoadFileScheduling  # noqa: PLC0415

  class FilesAndExamples(LoadFileScheduling):
    def _split_scope(self, nodeid: str) -> str:
      return nodeid if nodeid.startswith(_WALK) else super()._split_scope(nodeid)

  return FilesAndExamples(config, log)


def cli_env(env: dict | None = None) -> dict[str, str]:
  """The environment of a `ckptbench` a test starts: this one without the tests' XLA_FLAGS, the source
  and tests on PYTHONPATH, and `env`."""
  full_env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  full_env["PYTHONPATH"] = os.pathsep.join(
      [str(REPO / "src"), str(REPO / "tests")] + [p for p in [os.environ.get("PYTHONPATH")] if p]
  )
  full_env.update(env or {})
  return full_env


def run_cli(*args: str, cwd: pathlib.Path | None = None, env: dict | None = None, timeout: float = 240):
  """Runs `ckptbench ARGS` as `python -m ckptbench ARGS` does; returns the CompletedProcess.

  In a process forked from one that imported ckptbench, JAX and Orbax once (tests/warm_cli.py): the
  import is a second or two of CPU a command, and the suite runs a few hundred. In a new Python process
  where `env` sets JAX's own variables, which JAX reads once, when it is imported. (A test whose subject
  is the process's start runs `python -m ckptbench` itself: tests/test_cli_startup.py.)
  """
  full_env = cli_env(env)
  if any(k.startswith("JAX_") and full_env.get(k) != os.environ.get(k) for k in {*full_env, *os.environ}):
    return subprocess.run([sys.executable, "-m", "ckptbench", *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=timeout)  # fmt: skip
  return run_cli_forked(list(args), pathlib.Path(cwd or os.getcwd()), full_env, timeout)


def run_cli_in_terminal(*args: str, env: dict | None = None, timeout: float = 240) -> tuple[int, str]:
  """Runs `python -m ckptbench ARGS` with its output on a pseudo-terminal (as a user at a prompt);
  returns (exit code, everything it printed)."""
  import pty  # noqa: PLC0415
  import select  # noqa: PLC0415

  full_env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
  full_env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(REPO / "tests")])
  full_env.update(env or {})
  controller, terminal = pty.openpty()
  proc = subprocess.Popen([sys.executable, "-m", "ckptbench", *args], env=full_env,
                          stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal)  # fmt: skip
  os.close(terminal)
  chunks = []
  try:
    while select.select([controller], [], [], timeout)[0]:
      try:
        data = os.read(controller, 65536)
      except OSError:  # EIO: the process closed the terminal
        break
      if not data:
        break
      chunks.append(data)
  finally:
    os.close(controller)
  return proc.wait(timeout=timeout), b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")


def timed_records(out: pathlib.Path) -> list[dict]:
  """OUT/results.jsonl's timed runs as the JSON objects written, selected by `ckptbench.timed_runs` (the one
  place that says what a record is): warm-ups and the memory pass's records left out."""
  import json  # noqa: PLC0415

  import ckptbench  # noqa: PLC0415

  lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
  records = [ckptbench.RunRecord.from_json(d) for d in lines]
  timed = {id(r) for r in ckptbench.timed_runs(records)}
  return [d for d, record in zip(lines, records) if id(record) in timed]


@pytest.fixture
def cli():
  return run_cli


def wait_for_views(out: pathlib.Path, timeout_s: float = 180) -> bool:
  """Waits until a detached views process has logged that it is done (OUT/views.log); True if it did."""
  import time  # noqa: PLC0415

  from ckptbench.views import VIEWS_DONE  # noqa: PLC0415

  deadline = time.monotonic() + timeout_s
  while time.monotonic() < deadline:
    log = out / "views.log"
    if log.exists() and VIEWS_DONE in log.read_text(errors="replace"):
      return True
    time.sleep(0.2)
  return False
