"""pytorch: the same tensors through torch.save, safetensors, DCP and Orbax."""

from __future__ import annotations

import pathlib

import pytest

pytest.importorskip("torch", reason="the torch extra is not installed (pip install 'ckptbench[torch]')")
pytest.importorskip("safetensors", reason="the torch extra is not installed (pip install 'ckptbench[torch]')")

from builtin_support import corrupt_before, errors, ok_metrics, run_text  # noqa: E402
from ckptbench.benchmarks.pytorch import PyTorchOptions  # noqa: E402

DATA = """\
suite_name: t
checkpoint_config:
  spec:
    w: {dtype: bfloat16, shape: [64, 32], sharding: [fsdp]}
    layer: {b: {dtype: float32, shape: [32]}, step: int}
mesh_config: {mesh_axes: [fsdp], ici_parallelism: {fsdp: 8}}
"""


def test_every_library_saves_and_loads_the_same_tensors(tmp_path):
  outcome = run_text(tmp_path, DATA, """\
      benchmarks:
        - generator: pytorch
          options: {library: [torch_save, safetensors, safetensors_mmap, dcp, dcp_async, orbax, torchax]}
      """)
  metrics = {r["options"]["library"]: r["metrics"] for r in outcome.records}
  ok_metrics(outcome)
  assert "torchax" not in metrics or PyTorchOptions(library="torchax").is_valid()
  assert {"torch_save", "safetensors", "safetensors_mmap", "dcp", "dcp_async", "orbax"} <= set(metrics)
  for m in metrics.values():
    assert m["save_9_other/tensors"]["value"] == 2
    for op in ("save", "save_blocking", "load", "verify"):
      assert m[f"{op}_0_basics/time_s"]["value"] > 0, op
  assert metrics["dcp_async"]["save_blocking_0_basics/time_s"]["value"] <= metrics["dcp_async"]["save_0_basics/time_s"]["value"]


def test_torchax_is_skipped_with_its_reason_when_it_does_not_import():
  options = PyTorchOptions(library="torchax")
  if options.is_valid():
    pytest.skip("torchax imports here")
  assert options.invalid_reason().startswith("torchax does not import")


def _flip_safetensors(root: pathlib.Path) -> bool:
  files = list(root.rglob("model.safetensors"))
  for file in files:
    data = bytearray(file.read_bytes())
    data[-1] ^= 0xFF  # the last byte of the tensor data
    file.write_bytes(bytes(data))
  return bool(files)


def test_check_fails_when_the_file_on_disk_is_wrong(tmp_path):
  # Measured blocks: save, save_blocking, then load (the 3rd).
  with corrupt_before(3, lambda: _flip_safetensors(tmp_path / "out")):
    outcome = run_text(tmp_path, DATA, """\
        benchmarks:
          - generator: pytorch
            options: {library: safetensors}
        """)
  [(kind, message)] = errors(outcome)
  assert kind == "DataMismatchError" and "library=safetensors" in message
