"""Synthetic data is built shard by shard: peak host memory stays near the array's size."""

from __future__ import annotations

import ckptbench
from ckptbench.config import ArraySpec, MeshConfig
from ckptbench.data import build_mesh, build_pytree


def test_peak_host_memory_is_about_one_array():
  mesh = build_mesh(MeshConfig(mesh_axes=("fsdp",), ici_parallelism={"fsdp": 8}))
  spec = {"w": ArraySpec(dtype="float32", shape=(8192, 4096), sharding=("fsdp",))}  # 128 MiB
  metrics = ckptbench.Metrics()
  with metrics.measure("generate", ["rss"]):
    tree = build_pytree(spec, mesh, seed=0, fill="normal")
  peak = metrics.to_dict()["generate_7_memory/host_rss_peak_diff_mib"].value
  # On CPU the devices' buffers are host memory, so the array itself is 128 MiB of
  # RSS; building it whole and then slicing would peak at several times that.
  assert peak < 128 * 1.5, peak
  assert tree["w"].addressable_shards[0].data.shape == (1024, 4096)
