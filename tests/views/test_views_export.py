"""`ckptbench.load_results` and `ckptbench export`."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import ckptbench
from ckptbench.cli import main
from ckptbench.errors import CkptbenchError
from ckptbench.results import export_results
from views_sample import sample_out  # noqa: F401  (fixture)


def test_load_results_has_one_row_per_run_and_metric_with_options_as_columns(sample_out):
  df = ckptbench.load_results(sample_out)

  # 5 successful runs x 16 metrics, plus the failed run's 2 save metrics.
  assert len(df) == 5 * 16 + 2
  assert {"benchmark", "repeat", "host", "tag", "operation", "namespace", "metric", "value", "unit",
          "use_ocdbt", "use_zarr3"} <= set(df.columns)
  save = df[df.tag == "save_0_basics/time_s"]
  means = save.groupby("use_ocdbt").value.mean()
  assert means[True] == pytest.approx(0.42) and means[False] == pytest.approx(0.63)
  failed = df[df.error.notna()]
  assert set(failed.repeat) == {1} and set(failed.tag) == {"save_0_basics/time_s", "save_0_basics/host_rss_diff_mib"}
  assert failed.error.iloc[0] == "ValueError: restored data differs <b>"
  assert json.loads(df.mesh.iloc[0])["mesh_axes"] == ["fsdp"]


def test_a_run_without_metrics_still_has_a_row_and_clashing_options_are_renamed(sample_out):
  record = json.loads((sample_out / "results.jsonl").read_text().splitlines()[0])
  record.update(metrics={}, repeat=3, error={"type": "OSError", "message": "disk full"},
                options={**record["options"], "value": [1, 2]})
  with open(sample_out / "results.jsonl", "a") as f:
    f.write(json.dumps(record) + "\n" + '{"torn": ')  # a run killed while writing its record

  df = ckptbench.load_results(sample_out)

  row = df[df.repeat == 3]
  assert len(row) == 1 and row.tag.isna().all() and row.error.iloc[0] == "OSError: disk full"
  assert row.option_value.iloc[0] == "[1, 2]"


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_round_trips(sample_out, fmt):
  path = export_results(sample_out, fmt)

  assert path == sample_out / f"results.{fmt}"
  back = pd.read_csv(path) if fmt == "csv" else pd.read_parquet(path)
  assert len(back) == 82
  assert back[back.tag == "load_0_basics/time_s"].value.sum() == pytest.approx(
      ckptbench.load_results(sample_out).query("tag == 'load_0_basics/time_s'").value.sum()
  )


def test_unknown_format_is_a_user_error(sample_out):
  with pytest.raises(CkptbenchError, match="use one of: csv, parquet"):
    export_results(sample_out, "xlsx")


def test_cli_export(sample_out, tmp_path, capsys):
  target = tmp_path / "r.parquet"
  assert main(["export", str(sample_out), "--format", "parquet", "-o", str(target)]) == 0
  assert capsys.readouterr().out.strip() == str(target)
  assert len(pd.read_parquet(target)) == 82
