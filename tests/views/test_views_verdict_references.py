"""A suite of several generators compares each generator's variants with a reference of their own.

examples/storage_gcs.yaml sweeps use_ocdbt in the `storage` built-in (store rooflines) and in
`save_restore` (Orbax saves): the first variant, a storage one, has no save time to divide an
Orbax save by, so both SaveRestore columns used to read "reference" and the OCDBT ratio was never shown.
"""

from __future__ import annotations

from rich.console import Console

from ckptbench.analysis import build_verdict, ratio_text
from ckptbench.api import RunRecord
from ckptbench.views._console import print_verdict


def _record(generator: str, ocdbt: bool, repeat: int, metrics: dict) -> RunRecord:
  return RunRecord(
      suite="s", benchmark=f"{generator} use_ocdbt={ocdbt}", key=f"{generator}-{ocdbt}", generator=generator,
      options={"use_ocdbt": ocdbt}, varying={"use_ocdbt": ocdbt}, mesh=None, checkpoint_config=None,
      repeat=repeat, warmup=False, host=0, num_hosts=1, path="p", started_at="t", duration_s=1.0,
      metrics={tag: {"value": value * (1 + repeat / 100), "unit": "s"} for tag, value in metrics.items()},
  )  # fmt: skip


def test_each_generator_has_its_own_reference_and_the_others_get_ratios():
  records = [
      *(_record("m.Storage", ocdbt, r, {"store_0_basics/time_s": 0.1}) for ocdbt in (False, True) for r in range(3)),
      *(_record("m.SaveRestore", ocdbt, r, {"save_0_basics/time_s": 0.4 if ocdbt else 0.2})
        for ocdbt in (False, True) for r in range(3)),
  ]  # fmt: skip
  verdict = build_verdict(records, {"use_ocdbt": False})
  assert verdict.references == ("m.Storage-False", "m.SaveRestore-False")
  ocdbt_save = verdict.cell("save_0_basics/time_s", "m.SaveRestore-True")
  assert ratio_text(ocdbt_save).startswith("2.00x")  # against SaveRestore use_ocdbt=False, not "reference"
  assert ratio_text(verdict.cell("save_0_basics/time_s", "m.SaveRestore-False")) == "reference"
  console = Console(record=True, width=200, color_system=None)
  print_verdict(verdict, "verdict: s", console)
  text = console.export_text()
  assert "(reference: m.Storage use_ocdbt=False, m.SaveRestore use_ocdbt=False)" in text
  cells = [line for line in text.splitlines() if line.startswith("│") and "reference" in line]
  assert len(cells) == 2 and all(line.count("reference") == 1 for line in cells)  # each generator's, on its row
