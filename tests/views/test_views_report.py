"""The HTML report: content, graceful degradation, and a real headless Chromium."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from conftest import CHROMEDRIVER, headless_chromium, wait_for_views

from ckptbench.cli import main
from ckptbench.errors import CkptbenchError
from ckptbench.results import read_outputs
from ckptbench.views import roofline_limits, write_report
from views_sample import sample_out  # noqa: F401  (fixture)



def _without_plotly_js(page: str) -> str:
  """The page with the inlined plotly.js bundle cut out (its code names map-tile servers it never calls here)."""
  from ckptbench.views._plots import plotly_js

  bundle = plotly_js()
  assert page.count(bundle) == 1  # inlined once, from the installed package
  return page.replace(bundle, "")


def test_report_shows_verdict_plots_limits_breakdowns_failures_comparison_and_manifest(sample_out):
  page = write_report(sample_out).read_text()
  own = _without_plotly_js(page)

  assert page.index("<h2>verdict</h2>") < page.index("baseline comparison") < page.index("<h2>runs in order</h2>")
  assert "reference: <b>use_ocdbt=True</b>" in own and "id=verdict" in own
  assert "1.50x" in own  # the False variant saves 1.5x slower than the reference
  # Runs in order (save and load time), the time/throughput grid, two stage breakdowns, memory.
  assert own.count('class="plotly-graph-div"') == 6
  assert "limit: disk_write_gbps 1.2 (probed date unknown, spread unknown)" in own
  assert "limit: disk_read_cold_gbps 1.6" in own
  assert "save: save stage breakdown" in own and "serialize_s" in own
  assert "load: load stage breakdown" in own and "deserialize_s" in own
  assert "save_5_inventory/total_gib" in own
  assert "restored data differs &lt;b&gt;" in own and "<b>restored" not in own  # errors are escaped
  assert "baseline comparison" in own and "class='worse'" in own
  assert "abc1234" in own and "orbax-checkpoint" in own
  # Self-contained: one inline script (plotly.js), nothing fetched from anywhere.
  assert own.count("<script") == 1 + 6 and "<script src" not in own
  for fetch in ('src="http', "src='http", 'href="http', "href='http", "url(http", "@import", "<link"):
    assert fetch not in own


def test_limits_carry_the_probes_date_and_spread(sample_out):
  manifest = json.loads((sample_out / "manifest.json").read_text())
  manifest["roofline"].update(measured_at="2026-11-22T08:00:00+00:00", repeats=3, spread={"disk_write": 0.12})
  (sample_out / "manifest.json").write_text(json.dumps(manifest))

  page = _without_plotly_js(write_report(sample_out).read_text())

  assert "limit: disk_write_gbps 1.2 (probed 2026-11-22 08:00, spread 12% over 3 probes)" in page


def test_a_first_repeat_far_above_the_others_is_flagged_in_the_report(sample_out):
  lines = []
  for line in (sample_out / "results.jsonl").read_text().splitlines():
    record = json.loads(line)
    if record["varying"]["use_ocdbt"] and record["repeat"] == 0:
      record["metrics"]["save_0_basics/time_s"]["value"] = 5.0
    lines.append(json.dumps(record))
  (sample_out / "results.jsonl").write_text("\n".join(lines) + "\n")

  page = _without_plotly_js(write_report(sample_out).read_text())

  assert "outlying repeats:" in page
  assert "use_ocdbt=True: save time of repeat 0 is 5 s" in page


def test_report_degrades_without_summary_manifest_or_comparison(sample_out, tmp_path):
  for name in ("summary.json", "manifest.json", "comparison.json"):
    (sample_out / name).unlink()

  page = write_report(sample_out, tmp_path / "elsewhere" / "r.html").read_text()

  assert "summary.json is missing" in page and "manifest.json is missing" in page
  assert "baseline comparison" not in page
  assert "restored data differs" in page  # failures still come from results.jsonl


def test_report_says_when_a_run_was_interrupted_or_skipped_something(sample_out):
  summary = json.loads((sample_out / "summary.json").read_text())
  summary.update(
      interrupted=True,
      skipped_meshes=[{"mesh": "fsdp=16", "reason": "needs 16 devices, have 8"}],
      invalid_combinations=[{"generator": "SaveRestore", "options": {"use_ocdbt": False}, "reason": "zarr3 needs ocdbt"}],
  )
  (sample_out / "summary.json").write_text(json.dumps(summary))

  page = write_report(sample_out).read_text()

  assert "the run was interrupted" in page
  assert "skipped mesh fsdp=16: needs 16 devices, have 8" in page
  assert "not run (zarr3 needs ocdbt)" in page


def test_roofline_units_are_converted_to_gib_per_s(sample_out):
  manifest = json.loads((sample_out / "manifest.json").read_text())
  manifest["roofline"] = {
      "disk": {"write": {"value": 1024.0, "unit": "MiB/s"}, "read_bytes_per_s": float(2 << 30)},
      "probe_size_gib": 2.0,  # not a rate: ignored
  }
  (sample_out / "manifest.json").write_text(json.dumps(manifest))

  assert roofline_limits(read_outputs(sample_out)) == {"disk/write": 1.0, "disk/read_bytes_per_s": 2.0}


def test_a_directory_without_results_is_a_user_error(tmp_path):
  with pytest.raises(CkptbenchError, match="holds no results.jsonl"):
    write_report(tmp_path)


@pytest.mark.slow
def test_cli_report_writes_the_file_and_errors_in_one_line(sample_out, tmp_path):
  env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
  target = tmp_path / "r.html"
  done = subprocess.run([sys.executable, "-m", "ckptbench", "report", str(sample_out), "-o", str(target)],
                        env=env, capture_output=True, text=True, timeout=120)
  assert done.returncode == 0, done.stderr
  assert target.stat().st_size > 10_000
  assert (sample_out / "tensorboard").is_dir()  # every default view, through the registry
  assert "tensorboard: written" in done.stdout


@pytest.mark.slow
def test_a_view_registered_by_user_code_is_written_by_the_detached_writer(sample_out, tmp_path):
  """`ckptbench run` writes its views in another process: user-registered views must reach it."""
  source = tmp_path / "my_views.py"
  source.write_text(
      "import pathlib\n"
      "from ckptbench.views import register_view\n"
      "def write(out_dir):\n"
      "  (pathlib.Path(out_dir) / 'mine.txt').write_text('runs: ' + str(len(open(pathlib.Path(out_dir) / 'results.jsonl').readlines())))\n"
      "register_view('mine', write)\n"
  )
  script = (
      "import runpy, sys\n"
      f"runpy.run_path({str(source)!r}, run_name='my_views')\n"
      "from ckptbench.views import start_views, view_sources\n"
      f"assert view_sources() == ({str(source)!r},), view_sources()\n"
      f"start_views({str(sample_out)!r}, probe=False)\n"
  )
  env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
  subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=120)
  wait_for_views(sample_out, 120)
  assert (sample_out / "mine.txt").read_text().startswith("runs: ")
  assert "mine: written" in (sample_out / "views.log").read_text()



def test_cli_report_of_a_missing_directory_is_one_line_and_exit_2(tmp_path, capsys):
  assert main(["report", str(tmp_path / "nope")]) == 2
  err = capsys.readouterr().err
  assert err.strip().count("\n") == 0 and "is not a directory" in err


@pytest.mark.skipif(
    not (shutil.which("chromium") and pathlib.Path(CHROMEDRIVER).exists()),
    reason="needs Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver)",
)
def test_report_renders_in_headless_chromium(sample_out, tmp_path):
  from selenium.webdriver.support.wait import WebDriverWait
  from PIL import Image

  page = write_report(sample_out)
  with headless_chromium() as driver:
    driver.get(page.as_uri())
    WebDriverWait(driver, 30).until(lambda d: len(d.find_elements("css selector", ".js-plotly-plot .main-svg")) >= 6)
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    shown = [fig.size for fig in driver.find_elements("css selector", ".js-plotly-plot")]
    verdict = driver.find_element("id", "verdict")
    verdict_text, verdict_y = verdict.text, verdict.location["y"]
    first_figure_y = driver.find_elements("css selector", ".js-plotly-plot")[0].location["y"]
    fetched = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    driver.execute_script("window.scrollTo(0, document.querySelector('.js-plotly-plot').getBoundingClientRect().top)")
    shot = tmp_path / "report.png"
    driver.save_screenshot(str(shot))

  assert errors == []
  assert fetched == []  # nothing loaded from anywhere, not even from disk
  assert len(shown) == 6 and all(s["width"] > 200 and s["height"] > 100 for s in shown)
  assert verdict_y < first_figure_y  # the answer comes first
  assert "use_ocdbt=False" in verdict_text and "reference" in verdict_text and "1.50x" in verdict_text
  image = Image.open(shot).convert("RGB")
  colors = image.getcolors(maxcolors=1 << 20)
  # Drawn, not blank: the first series colour of the plots is on screen, and much else besides white.
  first_color = sum(n for n, rgb in colors if rgb == (0x4C, 0x72, 0xB0))
  non_white = sum(n for n, rgb in colors if rgb != (255, 255, 255))
  assert first_color > 2_000, first_color
  assert non_white > 0.05 * image.width * image.height
