"""compat.orbax's device_mesh: ckptbench's meshes, with Orbax's checks of a hybrid mesh's degrees."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import ckptbench
from ckptbench.compat.orbax.core import device_mesh


def test_meshes_on_cpu_are_ckptbench_meshes():
  ici = ckptbench.MeshConfig(mesh_axes=["data", "model"], ici_parallelism={"data": 2, "model": 4})
  hybrid = ckptbench.MeshConfig(mesh_axes=["data", "model"], ici_parallelism={"model": 4}, dcn_parallelism={"data": 2})
  for config in (ici, hybrid):
    mesh = device_mesh.create_mesh(config)
    assert dict(mesh.shape) == {"data": 2, "model": 4}
    np.testing.assert_array_equal(mesh.devices, ckptbench.build_mesh(config).devices)


@pytest.mark.parametrize(
    "ici, dcn, message",
    [
        ({"x": 4, "y": 2}, {"y": 2}, "The product of DCN parallelism values 2 must equal process_count 1"),
        ({"x": 2, "y": 2}, {}, "The product of ICI parallelism values 4 must equal num_devices_per_granule 8"),
    ],
)
def test_a_hybrid_mesh_whose_degrees_do_not_fit_the_processes_is_orbax_error(ici, dcn, message):
  # The checks a hybrid mesh on an accelerator passes, over this machine's 8 devices in 1 process.
  config = ckptbench.MeshConfig(mesh_axes=["x", "y"], ici_parallelism=ici, dcn_parallelism=dcn, process_is_granule=True)
  shape = [ici.get(a, 1) for a in ("x", "y")], [dcn.get(a, 1) for a in ("x", "y")]
  with pytest.raises(ValueError, match=message):
    device_mesh._check_hybrid(config, *shape)


def test_slices_are_the_granule_unless_processes_are_and_devices_without_a_slice_make_one():
  config = ckptbench.MeshConfig(mesh_axes=["x"], ici_parallelism={"x": 8}, dcn_parallelism={"x": 1})
  assert device_mesh._num_slices() == 1 and len(jax.devices()) == 8
  assert device_mesh._check_hybrid(config, [8], [1]) is False  # slices: one, of all 8 devices
  with pytest.raises(ValueError, match=r"must equal num_slices 1"):
    device_mesh._check_hybrid(config, [4], [2])
