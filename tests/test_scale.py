"""`ckptbench scale`: suites per host count, the memory refusal, bad input, and 1-4 emulated hosts
end to end against the GCS emulator through the shaped link."""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys

import pytest

from ckptbench.cli._scale import _counts
from ckptbench.config import load_suite
from ckptbench.errors import CkptbenchError, ConfigError
from ckptbench.engine.scaling._scale import check_hosts
from ckptbench.engine.scaling._store import measured_latency, store_profile
from ckptbench.stats._store_model import PROFILES
from ckptbench.engine.scaling._suite import PROCESS_BYTES, memory_refusal, scaled_suites

SUITE = """\
suite_name: scale test
num_repeats: 1
num_warmups: 0
checkpoint_config:
  preset: llama-3.1-8b
  scale: 0.00002
mesh_config:
  mesh_axes: [fsdp]
  ici_parallelism: {fsdp: 1}
benchmarks:
  - generator: save_restore
    options:
      use_ocdbt: [true]
      use_compression: false
"""


def _suite(tmp_path, text=SUITE):
  path = tmp_path / "suite.yaml"
  path.write_text(text)
  return path


def _leaves(tree):
  for key, value in tree.items():
    if "shape" in value:
      yield key, value
    else:
      yield from _leaves(value)


def test_weak_scaling_keeps_each_hosts_shard_and_strong_keeps_the_total(tmp_path):
  suite = load_suite(_suite(tmp_path))
  weak = scaled_suites(suite, [1, 4], "weak", "fsdp", "gs://b/p")
  strong = scaled_suites(suite, [1, 4], "strong", "fsdp", "gs://b/p")
  assert [s.raw["mesh_config"]["ici_parallelism"] for s in weak] == [{"fsdp": 1}, {"fsdp": 4}]
  assert weak[1].raw["checkpoint_root"] == "gs://b/p/hosts_4"
  # The preset became its spec: same tensors; the absent axis `tensor` is replicated.
  one, four = (dict(_leaves(s.raw["checkpoint_config"]["spec"])) for s in weak)
  assert one.keys() == four.keys() and len(one) == 12
  assert one["embedding"]["sharding"] == [None, "fsdp"]
  assert four["embedding"]["shape"] == [one["embedding"]["shape"][0], 4 * one["embedding"]["shape"][1]]
  # Weak: a host's shard is the same at 4 hosts (replicated norms aside); the total grows 4 times.
  assert weak[1].host_bytes == pytest.approx(weak[0].host_bytes, rel=0.01)
  assert weak[1].data_bytes == pytest.approx(4 * weak[0].data_bytes, rel=0.01)
  assert strong[1].data_bytes == strong[0].data_bytes
  assert strong[1].host_bytes == pytest.approx(strong[0].host_bytes / 4, rel=0.01)
  assert "preset" not in weak[0].raw["checkpoint_config"]


def test_suites_scale_cannot_run_are_named(tmp_path):
  suite = load_suite(_suite(tmp_path))
  with pytest.raises(ConfigError, match="no axis 'tensor'"):
    scaled_suites(suite, [1, 2], "weak", "tensor", "gs://b/p")
  with pytest.raises(CkptbenchError, match="not gs:// or s3://"):
    scaled_suites(suite, [1, 2], "weak", "fsdp", str(tmp_path))
  two_meshes = SUITE.replace("mesh_config:\n  mesh_axes: [fsdp]\n  ici_parallelism: {fsdp: 1}",
                             "mesh_configs:\n  - {mesh_axes: [fsdp], ici_parallelism: {fsdp: 1}}\n"
                             "  - {mesh_axes: [fsdp], ici_parallelism: {fsdp: 2}}")  # fmt: skip
  with pytest.raises(ConfigError, match="exactly one mesh_config"):
    scaled_suites(load_suite(_suite(tmp_path, two_meshes)), [1, 2], "weak", "fsdp", "gs://b/p")


def test_host_counts_that_cannot_start_are_refused_by_memory(tmp_path):
  suite = load_suite(_suite(tmp_path))
  fits = scaled_suites(suite, [1, 2], "weak", "fsdp", "gs://b/p")
  assert memory_refusal(fits) is None
  too_many = scaled_suites(suite, [2, 100_000], "weak", "fsdp", "gs://b/p")
  message = memory_refusal(too_many)
  assert message.startswith("--hosts: 100000 hosts need about") and "2 hosts" not in message
  assert "400.0 MiB per process" in message and PROCESS_BYTES == 400 << 20


def _cli(*args, cwd=None, timeout=600):
  return subprocess.run([sys.executable, "-m", "ckptbench", "scale", *map(str, args)], capture_output=True,
                        text=True, cwd=cwd, timeout=timeout)  # fmt: skip


def test_bad_input_is_named(tmp_path):
  with pytest.raises(argparse.ArgumentTypeError, match="expected host counts such as 1,2,4,8"):
    _counts("1,x")
  # Fewer than 3 host counts from --fit_from on cannot tell the growth laws apart: refused up front.
  with pytest.raises(CkptbenchError) as refused:
    check_hosts((1, 2, 4), (64,), fit_from=2)
  assert str(refused.value) == ("Invalid value for --hosts=1,2,4: telling growth laws apart needs 3 distinct host"
                                " counts from --fit_from=2 on, and these give 2 (2, 4); run e.g. --hosts 1,2,4,8")
  with pytest.raises(CkptbenchError, match=r"these give 2 \(1, 2\); run e.g. --hosts 1,2,4$"):
    check_hosts((1, 2), (64,), fit_from=1)
  with pytest.raises(CkptbenchError, match=r"these give 0 \(none\); run e.g. --hosts 1,2,8,16,32$"):
    check_hosts((1, 2), (64,), fit_from=8)
  check_hosts((1, 2, 4), (64,), fit_from=1)
  (tmp_path / "p.json").write_text('{"base": "s3", "latency": 1}')
  with pytest.raises(CkptbenchError, match="unknown field 'latency'"):
    store_profile(str(tmp_path / "p.json"))
  (tmp_path / "p.json").write_text('{"base": "s3", "latency_s": 0.02}')
  profile = store_profile(str(tmp_path / "p.json"))
  assert (profile.latency_s, profile.write_requests_per_s, profile.name) == (0.02, 3500.0, "p")


@pytest.mark.slow
def test_the_cli_refuses_too_few_host_counts_in_one_line_with_exit_2(tmp_path):
  result = _cli(_suite(tmp_path), "--hosts", "1,2", "--emulate", "gcs", "-o", tmp_path / "o")
  assert result.returncode == 2 and "Traceback" not in result.stderr
  assert result.stderr.strip().splitlines()[-1].endswith("these give 2 (1, 2); run e.g. --hosts 1,2,4")
  assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_the_cli_refuses_a_local_root_in_one_line_with_exit_2(tmp_path):
  result = _cli(_suite(tmp_path), "--hosts", "1,2,4", "-o", tmp_path / "o")
  assert result.returncode == 2 and "is not gs:// or s3://" in result.stderr and "Traceback" not in result.stderr
  assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_one_to_four_emulated_hosts_end_to_end(tmp_path):
  pytest.importorskip("gcp_storage_emulator")
  out = tmp_path / "out"
  result = _cli(_suite(tmp_path), "--hosts", "1,2,4", "--emulate", "gcs", "--predict", "1024", "-o", out)
  assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
  doc = json.loads((out / "scale.json").read_text())
  assert doc["hosts"] == [1, 2, 4] and doc["mode"] == "weak" and "inflated" in doc["notes"][0]
  (bench,) = doc["measured"]
  measured = doc["measured"][bench]
  puts = [measured["requests_put_total"][str(n)]["value"] for n in (1, 2, 4)]
  assert measured["requests_put_total"]["1"]["kind"] == "count" and measured["save_time_s"]["1"]["kind"] == "time"
  assert not measured["requests_put_total"]["1"]["inflated"] and measured["save_time_s"]["1"]["inflated"]
  assert all(measured["requests_put_total"][str(n)]["repeat_spread"] == 0 for n in (1, 2, 4))
  # Each block counted apart (the link_requests collector): the primary's commit work is in the save.
  assert measured["requests_save_total"]["4"]["value"] > 0 and measured["requests_load_total"]["4"]["value"] > 0
  assert measured["primary_extra_requests_save"]["4"]["value"] > 0
  # Distinct objects read: at most the reads; the repeated ones are a rate, inflated like a time.
  get, distinct = (measured[m]["4"]["value"] for m in ("requests_get_total", "requests_get_distinct_total"))
  assert 0 < distinct <= get and measured["repeat_reads_load_per_s"]["4"]["kind"] == "rate"
  assert measured["repeat_reads_load_per_s"]["4"]["inflated"]
  # OCDBT's merge reads every host's manifest: the primary's commit steps touch more objects with more hosts.
  commit = [measured["primary_commit_distinct_requests"][str(n)]["value"] for n in (1, 2, 4)]
  assert 0 < commit[0] < commit[2]
  # The commit time is the loaded machine's: where it did not grow with the requests, no model, said so.
  model = doc["commit_model"][bench]
  assert model["seconds"]["1024"] > 0 if "seconds" in model else "did not grow" in model["refused"]
  assert ("primary commit time = " if "seconds" in model else "primary commit time: no model (") in result.stdout
  # OCDBT: the primary's writes stay, every other host adds the same few (its own OCDBT files).
  assert puts[1] > puts[0] and puts[2] - puts[1] == 2 * (puts[1] - puts[0])
  assert measured["barriers_save"]["1"]["value"] == 0 < measured["barriers_save"]["2"]["value"]
  assert measured["barriers_save"]["2"]["value"] == measured["barriers_save"]["4"]["value"]
  files = [measured["files"][str(n)]["value"] for n in (1, 2, 4)]
  assert files[0] < files[1] < files[2]
  assert measured["metadata_bytes"]["4"]["value"] > 0
  pred = doc["predictions"][bench]["requests_put_total"]["1024"]
  assert pred["low"] <= pred["value"] <= pred["high"] and pred["dominant"]
  # Three counts choose the PUTs' law, and the prediction is the line through them (the issue: 23
  # at 64 hosts from the constant law of 2 counts, where the line gives 267), from those counts.
  line = puts[0] + (puts[1] - puts[0]) * (1024 - 1)
  assert pred["value"] == pytest.approx(line) and pred["from_hosts"] == [1, 2, 4]
  assert doc["fits"][bench]["requests_put_total"]["from_hosts"] == [1, 2, 4]
  assert doc["fits"][bench]["requests_put_total"]["check"] is None
  assert "needs 3 distinct host counts" in doc["fits"][bench]["requests_put_total"]["no_check"]
  # Barriers exist from 2 hosts on: 2 counts, no law, no prediction, measured all the same.
  assert "barriers_save" not in doc["fits"][bench] and "barriers_save" not in doc["predictions"][bench]
  assert doc["no_law"][bench]["barriers_save"] == "a law from 2 hosts on needs 3 distinct host counts, got 2 (2, 4)"
  assert "from 1, 2, 4 hosts" in result.stdout and "no law, no prediction" in result.stdout
  save = doc["store_times"][bench]["save"]["1024"]
  assert save["dominant"] in save["terms"] and math.isclose(save["seconds"], max(save["terms"].values()))
  assert {limit["name"] for limit in doc["limits"][bench]} >= {"write request rate", "primary memory"}
  assert doc["load"]["4"]["cpus"] >= 1 and doc["load"]["4"]["wall_s"] > 0
  page = (out / "scale.html").read_text()
  assert "at 1,024 hosts" in page and "dominated by" in page and "Plotly" in page
  assert "requests_put_total" in result.stdout and "at 1,024 hosts" in result.stdout
  for n in (1, 2, 4):
    assert (out / f"hosts_{n}" / "results.jsonl").exists() and (out / "logs" / f"hosts_{n}.log").exists()
  again = _cli(_suite(tmp_path), "--hosts", "1,2,4", "--emulate", "gcs", "--predict", "1024", "-o", out, "--resume")
  assert again.returncode == 0 and again.stdout.count("(--resume)") == 3, again.stdout[-2000:] + again.stderr[-2000:]
  assert json.loads((out / "scale.json").read_text())["measured"] == doc["measured"]


def test_the_profile_latency_comes_from_a_storage_run(tmp_path):
  import ckptbench  # noqa: PLC0415

  suite = tmp_path / "storage.yaml"
  suite.write_text("suite_name: rtt\nnum_repeats: 2\nnum_warmups: 0\nbenchmarks:\n  - generator: storage\n"
                   "    options: {object_count: 8, object_size_mib: 0.01, concurrency: 4, use_ocdbt: [false, true]}\n")
  out = tmp_path / "out"
  outcome = ckptbench.run(str(suite), ckptbench.RunSettings(output_dir=out, write_views=False, probe_storage=False))
  assert outcome.exit_code == 0
  times = sorted(r.value("write_0_basics/time_s") for r in ckptbench.timed_runs(outcome.records)
                 if not r.options["use_ocdbt"])  # fmt: skip
  profile = measured_latency(PROFILES["s3"], out)
  assert profile.latency_s == pytest.approx(sum(times) / 2 / 2)  # median of 2 runs, 8 objects / 4 in flight
  assert profile.write_requests_per_s == 3500.0 and "storage built-in" in profile.source
  with pytest.raises(CkptbenchError, match="no successful run of the storage built-in"):
    measured_latency(PROFILES["s3"], tmp_path)


def test_the_link_counts_each_measured_blocks_requests(monkeypatch):
  import urllib.error  # noqa: PLC0415
  import urllib.request  # noqa: PLC0415

  from ckptbench.metrics._store_requests import LinkRequestsCollector  # noqa: PLC0415
  from ckptbench.storage import (  # noqa: PLC0415
      LINK_STATS_PATH, LINK_STATS_URL_ENV, LinkShape, start_link, stop_emulator,
  )

  monkeypatch.delenv(LINK_STATS_URL_ENV, raising=False)
  outside = LinkRequestsCollector()
  outside.start()
  assert outside.stop() == {}  # no link, no tags
  link, proc = start_link("http://127.0.0.1:9", LinkShape())  # nothing listens upstream: the request fails
  try:
    monkeypatch.setenv(LINK_STATS_URL_ENV, link.endpoint + LINK_STATS_PATH)
    block = LinkRequestsCollector()
    block.start()
    # The same object read twice (TensorStore's cache token differs): two reads, one distinct.
    for method, query in (("GET", "?tensorstore=1"), ("GET", "?tensorstore=2"), ("PUT", ""), ("DELETE", "")):
      with pytest.raises(urllib.error.HTTPError):
        request = urllib.request.Request(link.endpoint + "/b/o" + query, method=method,
                                         data=b"" if method == "PUT" else None)  # fmt: skip
        urllib.request.urlopen(request, timeout=10)
    measured = block.stop()
  finally:
    stop_emulator(proc)
  counts = {tag.removeprefix("5_inventory/store_"): m.value for tag, m in measured.items() if tag.endswith("_count")}
  assert counts == {"put_count": 1, "get_count": 2, "list_count": 0, "delete_count": 1, "put_distinct_count": 1,
                    "get_distinct_count": 1, "list_distinct_count": 0, "delete_distinct_count": 1}  # fmt: skip
  assert measured["5_inventory/store_request_s"].value == 0  # no upstream answered: no round trip completed
  assert "5_inventory/store_commit_get_count" not in measured  # no Orbax commit step in the block


def test_the_link_log_counts_distinct_targets_and_requests_inside_windows():
  from ckptbench.storage._link import RequestLog, request_target  # noqa: PLC0415

  log = RequestLog()
  targets = [request_target("GET", "/b/o/x", q) for q in ("alt=media&tensorstore=a", "alt=media&ifGenerationNotMatch=4")]
  assert targets[0] == targets[1] == "GET /b/o/x?alt=media"
  assert request_target("GET", "/b/o", "prefix=x/&pageToken=2") != request_target("GET", "/b/o", "prefix=x/")
  entries = [log.begin("get", t) for t in targets] + [log.begin("list", "GET /b/o?prefix=x/")]
  for e in entries:
    log.end(e)
  assert log.since(0)["distinct"] == {"put": 0, "get": 1, "list": 1, "delete": 0}
  assert log.since(1)["distinct"]["get"] == 1 and log.since(3)["distinct"]["list"] == 0
  inside = log.since(0, [(entries[2][0], entries[2][0])])
  assert inside["in_windows"] == {"put": 0, "get": 0, "list": 1, "delete": 0}
  assert inside["in_windows_request_s"] == pytest.approx(entries[2][1] - entries[2][0])
  assert log.since(0, [(entries[0][0], entries[2][0])])["in_windows_distinct"] == 2


def test_the_console_and_the_page_name_each_predictions_host_counts_and_each_metric_without_a_law(tmp_path):
  from ckptbench.engine.scaling._scale import ScaleSettings, scale_document  # noqa: PLC0415
  from ckptbench.engine.scaling._metrics import COUNT, Measured  # noqa: PLC0415
  from ckptbench.views import scale_as_text, write_scale_page  # noqa: PLC0415

  # The counts: 11 + 4n PUTs at 1, 2, 4 hosts; barriers (a cross-host step) 0, 7, 7.
  measured = {n: {"B": {"requests_put_total": Measured(COUNT, "requests", 11.0 + 4 * n),
                        "barriers_save": Measured(COUNT, "barriers", 0.0 if n == 1 else 7.0, first_hosts=2)}}
              for n in (1, 2, 4)}  # fmt: skip
  settings = ScaleSettings(suite="s.yaml", output_dir=tmp_path, hosts=(1, 2, 4), targets=(64,))
  loads = {n: {"loadavg_1m_before": 1.0, "loadavg_1m_after": 1.0, "cpus": 2, "wall_s": 1.0} for n in (1, 2, 4)}
  doc = json.loads(json.dumps(scale_document(settings, "s", measured, loads, 1e5, 1)))  # as scale.json holds it
  assert doc["schema_version"] == 2 and doc["fit_from"] == 1
  assert doc["predictions"]["B"]["requests_put_total"]["64"]["value"] == pytest.approx(267.0)
  assert doc["predictions"]["B"]["requests_put_total"]["64"]["from_hosts"] == [1, 2, 4]
  assert doc["fits"]["B"]["requests_put_total"]["from_hosts"] == [1, 2, 4]
  assert doc["no_law"]["B"] == {"barriers_save": "a law from 2 hosts on needs 3 distinct host counts, got 2 (2, 4)"}
  assert doc["measured"]["B"]["barriers_save"]["4"]["first_hosts"] == 2 and "barriers_save" not in doc["predictions"]["B"]
  text = scale_as_text(doc)
  assert "at 64 hosts  267 [267, 267] (linear term, from 1, 2, 4 hosts)" in text
  assert "– (predicting 4 hosts from the smaller counts needs 3 distinct host counts, got 2 (1, 2))" in text
  assert "barriers_save" in text and "no law, no prediction: a law from 2 hosts on needs 3" in text
  page = write_scale_page(doc, tmp_path).read_text()
  assert "fitted from hosts" in page and "<td>1, 2, 4</td>" in page and "predicted from 1, 2, 4 hosts" in page
  assert "no law, no prediction: a law from 2 hosts on" in page
