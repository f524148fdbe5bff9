"""The HTML report: content, graceful degradation, and a real headless Chromium."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from ckptbench.cli import main
from ckptbench.errors import CkptbenchError
from ckptbench.outputs import read_outputs, roofline_limits, write_report
from outputs_sample import sample_out  # noqa: F401  (fixture)

CHROMEDRIVER = "/usr/bin/chromedriver"


def test_report_shows_plots_limits_breakdowns_failures_comparison_and_manifest(sample_out):
  page = write_report(sample_out).read_text()

  assert page.count("<svg") == 4  # time/throughput grid, two stage breakdowns, memory
  assert "limit: disk_write_gbps 1.2" in page  # the roofline beside save throughput
  assert "limit: disk_read_cold_gbps 1.6" in page
  assert "save: save stage breakdown" in page and "serialize_s" in page
  assert "load: load stage breakdown" in page and "deserialize_s" in page
  assert "save_5_inventory/total_gib" in page
  assert "restored data differs &lt;b&gt;" in page and "<b>" not in page  # errors are escaped
  assert "baseline comparison" in page and "class='regressed'" in page
  assert "abc1234" in page and "orbax-checkpoint" in page
  # Self-contained: nothing is fetched from anywhere.
  for fetch in ('src="http', "src='http", 'href="http', "href='http", "url(http", "@import", "<link", "<script"):
    assert fetch not in page


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


def test_cli_report_writes_the_file_and_errors_in_one_line(sample_out, tmp_path):
  env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
  target = tmp_path / "r.html"
  done = subprocess.run([sys.executable, "-m", "ckptbench", "report", str(sample_out), "-o", str(target),
                         "--tensorboard"], env=env, capture_output=True, text=True, timeout=120)
  assert done.returncode == 0, done.stderr
  assert target.stat().st_size > 10_000
  assert (sample_out / "tensorboard").is_dir()



def test_cli_report_of_a_missing_directory_is_one_line_and_exit_2(tmp_path, capsys):
  assert main(["report", str(tmp_path / "nope")]) == 2
  err = capsys.readouterr().err
  assert err.strip().count("\n") == 0 and "is not a directory" in err


@pytest.mark.skipif(
    not (shutil.which("chromium") and pathlib.Path(CHROMEDRIVER).exists()),
    reason="needs Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver)",
)
def test_report_renders_in_headless_chromium(sample_out, tmp_path):
  webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (the dev extra)")
  from selenium.webdriver.chrome.service import Service
  from PIL import Image

  page = write_report(sample_out)
  options = webdriver.ChromeOptions()
  for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--no-first-run", "--window-size=1400,1800"):
    options.add_argument(flag)
  options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
  driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
  try:
    driver.get(page.as_uri())
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    shown = [svg.size for svg in driver.find_elements("css selector", ".figure svg")]
    shot = tmp_path / "report.png"
    driver.save_screenshot(str(shot))
  finally:
    driver.quit()

  assert errors == []
  assert len(shown) == 4 and all(s["width"] > 200 and s["height"] > 100 for s in shown)
  image = Image.open(shot).convert("RGB")
  colors = image.getcolors(maxcolors=1 << 20)
  # Bars in the plots' palette are on screen: thousands of pixels of the first bar colour.
  bar_blue = sum(n for n, rgb in colors if rgb == (0x4C, 0x72, 0xB0))
  non_white = sum(n for n, rgb in colors if rgb != (255, 255, 255))
  assert bar_blue > 5_000, bar_blue
  assert non_white > 0.05 * image.width * image.height
