"""A history of runs: entries, the store (local and GCS emulator, concurrent appends), series and
their changes, runs judged on arrival and the gate (its rates on 1,000 planted series per case),
the analysis cache in the index, exports, the page (in headless Chromium) and the command line."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import CHROMEDRIVER, REPO, headless_chromium, run_cli

from ckptbench.cli import main
from ckptbench.errors import CkptbenchError
from ckptbench.history import (
    Arrival,
    Change,
    Environment,
    HistoryEntry,
    HistoryStore,
    Point,
    analyse,
    gate,
    history_document,
    load_cache,
    save_cache,
)
from ckptbench.history._store import INDEX_AFTER
from history_benchmarks import STEP_FACTOR
from store_servers import gcs_store  # noqa: F401  (fixture)

SUITE = """\
suite_name: history_saveload
num_repeats: 12
num_warmups: 1
checkpoint_config:
  spec: {params: {dtype: float32, shape: [64, 16], sharding: [data]}}
mesh_config: {mesh_axes: [data], ici_parallelism: {data: 8}}
benchmarks:
  - generator: history_benchmarks.SaveLoadBenchmark
"""


def _environment(**changes) -> Environment:
  base = {"versions": {"ckptbench": "0.1.0", "jax": "0.10.2", "orbax-checkpoint": "0.12.8"}, "backend": "cpu",
          "device_kind": "cpu", "device_count": 2, "process_count": 1, "host": "vm", "fingerprint": "abc123"}  # fmt: skip
  return Environment(**{**base, **changes})


def _entry(i: int, levels: dict[str, float], rng, environment: Environment | None = None, name: str | None = None):
  points = []
  for metric, level in levels.items():
    samples = tuple(float(v) for v in level * np.exp(rng.normal(0, 0.03, 5)))
    points.append(Point("SaveLoad", "k1", metric, "s", float(np.median(samples)), min(samples), max(samples), samples))
  return HistoryEntry(name or f"20260101T{i:06d}-{rng.integers(1 << 60):x}", f"r{i}", f"2026-01-01T00:00:{i:02d}+00:00",
                      "suite", environment or _environment(), tuple(points))  # fmt: skip


def _planted_entries(n=14, step_at=9, factor=1.5, seed=0, environment_at=None):
  rng = np.random.default_rng(seed)
  entries = []
  for i in range(1, n + 1):
    env = _environment(versions={"ckptbench": "0.1.0", "jax": "0.11.0" if environment_at and i >= environment_at
                                 else "0.10.2", "orbax-checkpoint": "0.12.8"})  # fmt: skip
    save = 0.1 * (factor if i >= step_at else 1.0)
    entries.append(_entry(i, {"save_0_basics/time_s": save, "load_0_basics/time_s": 0.05}, rng, env))
  return entries


# -- series, changes and the gate (entries built in memory)
def test_a_step_is_one_worse_change_named_by_its_label_with_what_changed_then():
  series = analyse(_planted_entries(environment_at=9))
  save = next(s for s in series if s.metric == "save_0_basics/time_s")
  load = next(s for s in series if s.metric == "load_0_basics/time_s")
  (change,) = save.changes
  assert (change.label, change.direction, change.index) == ("r9", "worse", 8)
  assert change.low > 1.0 and 1.35 < change.ratio < 1.65
  assert change.also_changed == ("jax 0.10.2 -> 0.11.0",)
  assert load.changes == () and save.environment_changes == ((8, ("jax 0.10.2 -> 0.11.0",)),)
  assert [c.label for c in gate(series)] == ["r9"]
  # r9 was worse on arrival, and the change confirms it; the newest run is judged against the new level.
  assert [(a.label, a.state) for a in save.flagged] == [("r9", "confirmed")]
  assert save.newest.label == "r14" and save.newest.state == "passed" and save.newest.reference_runs == 5
  doc = history_document(series, _planted_entries())
  assert {"suite", "benchmark", "metric", "label", "direction", "ratio", "low", "high"} <= set(doc["changes"][0])
  json.dumps(doc)  # JSON as it is


def test_series_from_different_machines_are_never_mixed():
  rng = np.random.default_rng(1)
  fast, slow = _environment(fingerprint="fast"), _environment(fingerprint="slow")
  # Alternating machines, one twice as slow: one series each, and neither has a change.
  entries = [_entry(i, {"save_0_basics/time_s": 0.1 if i % 2 else 0.2}, rng, fast if i % 2 else slow) for i in range(1, 21)]
  series = analyse(entries)
  assert sorted(s.machine.split()[0] for s in series) == ["fast", "slow"]
  assert all(len(s.medians) == 10 and s.changes == () for s in series)
  gpu = _environment(backend="gpu", device_kind="H100")
  assert len(analyse([*entries, _entry(21, {"save_0_basics/time_s": 0.1}, rng, gpu)])) == 3


def test_an_improvement_passes_the_gate_and_selection_picks_series():
  series = analyse(_planted_entries(factor=0.6))
  assert [c.direction for s in series for c in s.changes] == ["better"] and gate(series) == []
  assert [s.metric for s in analyse(_planted_entries(), select=["load_*"])] == ["load_0_basics/time_s"]
  with pytest.raises(CkptbenchError, match="matches no series"):
    analyse(_planted_entries(), select=["nothing"])


def test_the_newest_run_worse_on_arrival_fails_the_gate_named_pending_then_confirmed_or_withdrawn():
  # Ten alike, the eleventh 1.5x: it fails the gate the night it arrives, named.
  series = analyse(_planted_entries(n=11, step_at=11))
  save = next(s for s in series if s.metric == "save_0_basics/time_s")
  (failing,) = gate(series)
  assert isinstance(failing, Arrival) and (failing.label, failing.state, failing.index) == ("r11", "pending", 10)
  assert failing.reference_runs == 10 and 1.4 < failing.ratio < 1.6 and failing.low > 1.0
  assert save.changes == () and save.flagged == (failing,)
  assert gate(analyse(_planted_entries(n=11, step_at=99))) == []  # eleven alike
  # The step goes on: confirmed by the change found once runs after it agree.
  series = analyse(_planted_entries(n=14, step_at=11))
  save = next(s for s in series if s.metric == "save_0_basics/time_s")
  assert [(c.label, c.direction) for c in save.changes] == [("r11", "worse")]
  assert save.flagged[0].label == "r11" and save.flagged[0].state == "confirmed"
  assert [type(f) for f in gate(series)] == [Change]
  # One odd run: flagged, then withdrawn once the runs after it are back, and the gate passes.
  entries = _planted_entries(n=11, step_at=11) + [_planted_entries(n=15, step_at=99, seed=1)[i] for i in range(11, 14)]
  save = next(s for s in analyse(entries) if s.metric == "save_0_basics/time_s")
  assert [(a.label, a.state) for a in save.flagged] == [("r11", "withdrawn")] and save.changes == ()
  assert gate(analyse(entries)) == []


def test_a_newest_run_with_too_few_runs_before_it_is_not_judged_and_the_gate_does_not_pass(tmp_path, capsys):
  series = analyse(_planted_entries(n=3, step_at=99))
  assert all(s.newest is None for s in series) and gate(series) == []
  store = HistoryStore(tmp_path / "hist")
  for entry in _planted_entries(n=3, step_at=99):
    store.append(entry)
  # Nothing was compared: a gate never passes on that (exit 5), and says why.
  assert main(["history", str(tmp_path / "hist"), "--fail_on_change"]) == 5
  assert "nothing was compared: no series has a newest run judged on arrival" in capsys.readouterr().out
  assert main(["history", str(tmp_path / "hist")]) == 0  # without the gate, news only


def _planted_series(count: int, before: int, after: int, factor: float, seed: int, heavy: bool = False) -> list[HistoryEntry]:
  """`count` series (one benchmark each) of `before` runs then `after` at `factor`: runs 8% apart by
  chance (normal, or Student's t with 3 degrees of freedom when `heavy`: the odd far run of a shared
  machine), 5 samples 5% apart within (the tests' planted series, as test_stats_change_points)."""
  rng = np.random.default_rng(seed)
  runs = before + after
  spread = 0.08 / np.sqrt(3.0) * rng.standard_t(3, (runs, count)) if heavy else rng.normal(0, 0.08, (runs, count))
  levels = 0.05 * np.exp(spread) * np.where(np.arange(runs) >= before, factor, 1.0)[:, None]
  values = levels[..., None] * np.exp(rng.normal(0, 0.05, (runs, count, 5)))
  return [HistoryEntry(f"e{i:03d}", f"r{i + 1}", f"2026-01-01T00:00:{i:02d}+00:00", "suite", _environment(),
                       tuple(Point(f"b{j}", f"k{j:04d}", "step_0_basics/time_s", "s", float(np.median(v)), float(v.min()),
                                   float(v.max()), tuple(v.tolist())) for j, v in enumerate(values[i])))
          for i in range(runs)]  # fmt: skip


def _gate_rate(before: int, after: int, factor: float, seed: int, count: int = 1000, heavy: bool = False) -> float:
  """The share of `count` planted series whose gate fails on their newest run."""
  failing = {f.benchmark for f in gate(analyse(_planted_series(count, before, after, factor, seed, heavy)))}
  return len(failing) / count


@pytest.mark.parametrize("heavy", [False, True])
@pytest.mark.parametrize("runs", [11, 30])
def test_the_gate_fails_on_at_most_one_a_and_a_run_in_100(runs, heavy):
  """1,000 series of `runs` alike: the gate fails on the newest in at most 1%, with normal spread
  between runs or heavy tails (docs/history.md: 0.3-0.9% measured here)."""
  rate = _gate_rate(runs - 1, 1, 1.0, seed=runs, heavy=heavy)
  print(f"A/A ({'heavy tails' if heavy else 'normal'}): the gate failed on {rate:.1%} of 1,000 runs {runs}")
  assert rate <= 0.01


@pytest.mark.parametrize(
    ("factor", "after", "least"),
    # The rates measured on these series, less a margin (docs/history.md quotes them): a 1.5x
    # step fails the gate on its first run 46 times in 100 (one run alone must be far out: a far
    # run is what heavy tails bring), on its second 66 times and its third 93 (the change
    # confirmed); a 1.2x step is hidden by 8% between runs until several runs agree.
    [(1.5, 1, 0.40), (1.5, 2, 0.60), (1.5, 3, 0.90), (1.5, 5, 0.95), (1.5, 8, 0.98),
     (1.2, 3, 0.12), (1.2, 5, 0.25), (1.2, 8, 0.45)],  # fmt: skip
)
def test_the_gate_fails_on_the_runs_after_a_step(factor, after, least):
  """1,000 series of 10 runs, then `after` runs at `factor`: the share whose gate fails on the
  newest (worse on arrival, or its newest confirmed change worse)."""
  rate = _gate_rate(10, after, factor, seed=int(factor * 100) + after)
  print(f"{factor}x, {after} runs after: the gate failed on {rate:.1%} of 1,000")
  assert rate >= least


# -- the analysis cache in the index
def test_the_cache_holds_each_series_by_its_runs_and_a_read_computes_only_what_changed(tmp_path):
  store = HistoryStore(tmp_path / "hist")
  entries = _planted_entries(n=12, step_at=11)
  for entry in entries[:11]:
    store.append(entry)
  cache = load_cache(store)
  first = analyse(store.read(), cache=cache)
  assert cache.added == 2 and save_cache(store, cache) is not None
  again = load_cache(store)
  assert analyse(store.read(), cache=again) == first and again.added == 0  # all read back, nothing computed
  assert save_cache(store, again) is None and len(list((tmp_path / "hist" / "index" / "changes").iterdir())) == 1
  # A new run: both series computed again; another threshold, or -k, computes only what it reads.
  store.append(entries[11])
  third = load_cache(store)
  assert [s.labels[-1] for s in analyse(store.read(), cache=third)] == ["r12", "r12"] and third.added == 2
  save_cache(store, third)
  fourth = load_cache(store)
  analyse(store.read(), select=["load_*"], threshold=0.2, cache=fourth)
  assert fourth.added == 1 and len(fourth) == 2  # the save series' row is kept for the next read
  # A part that is not one is an error naming it.
  (tmp_path / "hist" / "index" / "changes" / "99999999T999999-x.parquet").write_text("not parquet")
  with pytest.raises(CkptbenchError, match=r"99999999T999999-x\.parquet: not a ckptbench history analysis cache"):
    load_cache(store)


def test_a_cache_that_cannot_be_written_costs_the_gate_nothing(tmp_path, capsys):
  store = HistoryStore(tmp_path / "hist")
  for entry in _planted_entries(n=11, step_at=11):
    store.append(entry)
  (tmp_path / "hist" / "index").mkdir()
  (tmp_path / "hist" / "index" / "changes").write_text("a file where the cache's folder goes")
  assert main(["history", str(tmp_path / "hist"), "--fail_on_change"]) == 3
  captured = capsys.readouterr()
  assert "r11 worse on arrival" in captured.out and "the analysis was not kept in" in captured.err


# -- the store
# A writer as its own process: entries of one point, each written as soon as it is made.
_WRITER = """
import sys
from ckptbench.history import Environment, HistoryEntry, HistoryStore, Point
location, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
environment = Environment({"ckptbench": "0.1.0"}, "cpu", "cpu", 2, 1, "vm", "abc123")
store = HistoryStore(location)
for i in range(count):
  point = Point("SaveLoad", "k1", "save_0_basics/time_s", "s", 0.1, 0.09, 0.11, (0.1, 0.09, 0.11))
  store.append(HistoryEntry(f"w{worker}-{i}", f"r{i}", f"2026-01-01T00:00:{i:02d}+00:00", "suite", environment, (point,)))
"""


def _append_many(location: str, worker: int, count: int) -> subprocess.Popen:
  env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
  return subprocess.Popen([sys.executable, "-c", _WRITER, location, str(worker), str(count)], env=env)


@pytest.mark.slow
def test_concurrent_appends_to_a_directory_lose_nothing_and_half_written_files_are_never_read(tmp_path):
  hist = tmp_path / "hist"
  writers = [_append_many(str(hist), w, 25) for w in range(4)]
  assert [w.wait(120) for w in writers] == [0] * 4
  # A writer killed mid-write leaves its dot-named temporary file: never read.
  (hist / "entries" / ".w9-0.json.tmp").write_text('{"schema_version": 1, "na')
  entries = HistoryStore(hist).read()
  assert sorted(e.name for e in entries) == sorted(f"w{w}-{i}" for w in range(4) for i in range(25))


@pytest.mark.slow
def test_an_index_is_written_once_there_are_many_entries_and_later_entries_are_read_beside_it(tmp_path):
  hist = tmp_path / "hist"
  assert _append_many(str(hist), 0, INDEX_AFTER + 6).wait(120) == 0
  first = HistoryStore(hist).read()
  (part,) = (hist / "index").iterdir()
  assert _append_many(str(hist), 1, 3).wait(120) == 0
  # Entries the index holds are not opened again: unreadable files there prove it.
  for entry in first[:5]:
    (hist / "entries" / f"{entry.name}.json").write_text("not json")
  again = HistoryStore(hist).read()
  assert len(again) == len(first) + 3 and [p.name for p in (hist / "index").iterdir()] == [part.name]
  assert [e.to_json() for e in again if e.name.startswith("w0-")] == [e.to_json() for e in first]


def test_bad_histories_are_one_error_naming_them(tmp_path):
  with pytest.raises(CkptbenchError, match="no such history"):
    HistoryStore(tmp_path / "nope").read()
  (tmp_path / "empty").mkdir()
  with pytest.raises(CkptbenchError, match="holds no entry"):
    HistoryStore(tmp_path / "empty").read()
  bad = tmp_path / "bad" / "entries"
  bad.mkdir(parents=True)
  (bad / "x.json").write_text("{")
  with pytest.raises(CkptbenchError, match=r"no entry of the history can be read; .*x\.json:1:2: not valid JSON"):
    HistoryStore(tmp_path / "bad").read()
  with pytest.raises(CkptbenchError, match="ftp"):
    HistoryStore("ftp://bucket/hist")


# -- the page, in a real headless Chromium
@pytest.mark.skipif(
    not (shutil.which("chromium") and pathlib.Path(CHROMEDRIVER).exists()),
    reason="needs Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver)",
)
def test_the_page_renders_offline_in_headless_chromium_names_the_change_and_filters(tmp_path):
  from selenium.webdriver.support.wait import WebDriverWait

  from ckptbench.views import write_history_page

  entries = _planted_entries(environment_at=9)
  series = analyse(entries)
  page = write_history_page(series, entries, gate(series), tmp_path / "history.html")
  with headless_chromium() as driver:
    driver.get(page.as_uri())
    WebDriverWait(driver, 30).until(lambda d: len(d.find_elements("css selector", ".js-plotly-plot .main-svg")) >= 2)
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    fetched = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    gate_text = driver.find_element("id", "gate").text + driver.find_element("css selector", "ul li.fail").text
    annotations = [a.text for a in driver.find_elements("css selector", ".js-plotly-plot .annotation-text")]
    flagged = driver.find_element("css selector", "#flagged li.confirmed").text
    triangles = len(driver.find_elements("css selector", ".js-plotly-plot .scatterlayer .trace:nth-child(2) .point"))
    shaded = len(driver.find_elements("css selector", ".js-plotly-plot .shapelayer path"))
    driver.find_element("id", "filter").send_keys("load_0")
    shown = [s.is_displayed() for s in driver.find_elements("css selector", "section.series")]
  assert errors == [] and fetched == []  # nothing loaded from anywhere: it reads offline
  assert "worse:" in gate_text and "save_0_basics/time_s" in gate_text and "from r9" in gate_text
  assert any(a.startswith("worse from r9") and "jax 0.10.2 -> 0.11.0" in a for a in annotations)
  assert "r9 worse on arrival, confirmed by a change" in flagged and triangles == 1  # the save chart's r9
  assert shaded >= 3  # the change's line and each chart's shaded run
  assert shown == [True, False]  # series are sorted by metric: load, then save


# -- command line
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
  for argv, words in (
      (["history", "add", str(tmp_path / "h")], "at least one output directory"),
      (["history", "add", str(tmp_path / "h"), str(tmp_path / "nope")], "nope"),
      (["history", str(tmp_path / "h"), "extra"], "one HIST"),
      (["history", str(tmp_path / "h"), "--label", "x"], "--label names a run being added"),
      (["run", "quickstart", "-o", str(tmp_path / "o"), "--label", "x"], "--history HIST"),
  ):
    assert main(argv) == 2, argv
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and words in err, (argv, err)
  with pytest.raises(SystemExit) as stop:  # the parser's check, as run's and compare's
    main(["history", str(tmp_path / "h"), "--threshold", "-1"])
  err = capsys.readouterr().err
  assert stop.value.code == 2 and err.strip().count("\n") == 0 and "argument --threshold" in err


def test_cli_history_writes_json_markdown_bmf_and_exits_3_with_fail_on_change(tmp_path, capsys):
  hist = tmp_path / "hist"
  store = HistoryStore(hist)
  for entry in _planted_entries():
    store.append(entry)
  outputs = {f: tmp_path / f for f in ("h.json", "summary.md", "bmf.json")}
  argv = ["history", str(hist), "--json", str(outputs["h.json"]), "--summary_md", str(outputs["summary.md"]),
          "--bmf", str(outputs["bmf.json"])]  # fmt: skip
  assert main(argv) == 0  # without --fail_on_change a change is news, not a failure
  assert main([*argv, "--fail_on_change"]) == 3
  out = capsys.readouterr().out
  assert "FAIL: worse" in out and "save_0_basics/time_s: worse from r9" in out
  assert "on arrival: suite | SaveLoad | save_0_basics/time_s: r9 worse on arrival, confirmed by a change" in out
  doc = json.loads(outputs["h.json"].read_text())
  assert [(c["metric"], c["label"], c["direction"]) for c in doc["changes"]] == [("save_0_basics/time_s", "r9", "worse")]
  assert "**Worse:**" in outputs["summary.md"].read_text()
  assert [(a["label"], a["state"]) for a in doc["flagged"]] == [("r9", "confirmed")]
  assert {a["label"] for a in doc["newest"]} == {"r14"}
  bmf = json.loads(outputs["bmf.json"].read_text())
  assert set(bmf["suite SaveLoad"]) == {"save_0_basics/time_s", "load_0_basics/time_s"}
  assert {"value", "lower_value", "upper_value"} == set(bmf["suite SaveLoad"]["save_0_basics/time_s"])
  assert main(["history", str(hist), "-k", "load_0", "--fail_on_change"]) == 0


# -- real runs
def _run_into_history(tmp_path: pathlib.Path, hist: str, label: str, step_factor: float) -> None:
  suite = tmp_path / "suite.yaml"
  suite.write_text(SUITE)
  out = tmp_path / f"out_{pathlib.Path(hist).name}_{label}"
  os.environ[STEP_FACTOR] = str(step_factor)
  try:
    code = main(["run", str(suite), "-o", str(out), "--no_views", "--no_probe", "--no_progress",
                 "--history", hist, "--label", label])  # fmt: skip
  finally:
    os.environ.pop(STEP_FACTOR)
  assert code == 0
  shutil.rmtree(out)


@pytest.mark.slow
@pytest.mark.alone
@pytest.mark.timeout(1200)
@pytest.mark.host_memory("off", reason="the gate over time of a 50 ms step: a memory pass after each of 25 runs would double the time")
def test_ten_real_runs_then_an_eleventh_at_one_and_a_half_times_fail_the_gate_on_the_eleventh(tmp_path):
  """Real runs of a small suite with a 50 ms step, two histories interleaved (the machine's load
  falls on both): ten alike, then an eleventh whose step takes 1.5x, fail the gate on the
  eleventh, named, the night it arrives; three more confirm it as a change. Eleven alike pass."""
  step = "step_0_basics/time_s"
  planted, flat = str(tmp_path / "planted"), str(tmp_path / "flat")
  for i in range(1, 12):
    _run_into_history(tmp_path, planted, f"r{i}", 1.5 if i == 11 else 1.0)
    _run_into_history(tmp_path, flat, f"r{i}", 1.0)
  page, doc = tmp_path / "planted.html", tmp_path / "planted.json"
  done = run_cli("history", planted, "--fail_on_change", "--html", str(page), "--json", str(doc))
  assert done.returncode == 3, done.stdout + done.stderr
  assert f"{step}: r11 worse on arrival, pending confirmation" in done.stdout
  found = json.loads(doc.read_text())
  (flag,) = [f for f in found["flagged"] if f["metric"] == step]
  assert (flag["label"], flag["state"]) == ("r11", "pending") and 1.3 < flag["ratio"] < 1.7 and flag["low"] > 1.0
  assert "r11: worse on arrival" in page.read_text()
  print(done.stdout)  # the figures, for the record (pytest -s)
  done = run_cli("history", flat, "--fail_on_change", "--json", str(tmp_path / "flat.json"))
  print(done.stdout)
  if done.returncode == 3:
    # The step sleeps: the machine's load does not move it. Save and load times do move with it
    # (a CPU hog starting or ending is a real change of the machine): say so rather than fail.
    assert f"{step}:" not in done.stdout.split("FAIL")[-1], done.stdout
    pytest.skip(f"the machine changed under the save and load series: {done.stdout.split('FAIL')[-1]}")
  assert done.returncode == 0, done.stdout + done.stderr
  for i in range(12, 15):
    _run_into_history(tmp_path, planted, f"r{i}", 1.5)
  done = run_cli("history", planted, "--fail_on_change", "--json", str(doc))
  assert done.returncode == 3, done.stdout + done.stderr
  found = json.loads(doc.read_text())
  assert [(c["label"], c["direction"]) for c in found["changes"] if c["metric"] == step] == [("r11", "worse")]
  assert [(f["label"], f["state"]) for f in found["flagged"] if f["metric"] == step][0] == ("r11", "confirmed")
  print(done.stdout)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_concurrent_runs_append_to_a_history_on_the_gcs_emulator(gcs_store, tmp_path):
  suite = tmp_path / "suite.yaml"
  suite.write_text(SUITE)
  hist = f"gs://{gcs_store.bucket}/history-{tmp_path.name}"
  env = {**os.environ, **gcs_store.env, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO / "tests")])}
  env.pop("XLA_FLAGS", None)
  runs = [subprocess.Popen([sys.executable, "-m", "ckptbench", "run", str(suite), "-o", str(tmp_path / f"out{i}"),
                            "--no_views", "--no_probe", "--no_progress", "--history", hist, "--label", f"job{i}"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
          for i in range(2)]  # fmt: skip
  outputs = [r.communicate(timeout=500)[0] for r in runs]
  assert [r.returncode for r in runs] == [0, 0], outputs
  entries = HistoryStore(hist).read()
  assert sorted(e.label for e in entries) == ["job0", "job1"]
  done = run_cli("history", hist, env=gcs_store.env)
  assert done.returncode == 0 and "history: 2 runs" in done.stdout, done.stdout + done.stderr
