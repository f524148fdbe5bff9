"""Checkpoint data: meshes, synthetic pytrees, existing checkpoints, verification."""

from ckptbench.data._fixture import ensure_fixture, fixture_identity, fixture_key, remove_fixture, stamped_key, write_fixture
from ckptbench.data._existing import (
    abstract_from_checkpoint,
    abstract_pytree,
    load_existing,
    write_sharding_config,
)
from ckptbench.data._leaf_names import leaf_name
from ckptbench.data._sharding_file import ShardingFile, check_loaded_shardings, read_sharding_config
from ckptbench.data._mesh import build_mesh
from ckptbench.data._synthetic import build_pytree, synthetic_pytree
from ckptbench.data._read_errors import DataMismatchError, reading_checkpoint
from ckptbench.data._safetensors import safetensors_name, write_safetensors
from ckptbench.data._verify import pytree_checksums, verify_pytree

from ckptbench.data._read_errors import unreadable_array_message

__all__ = [
    "ensure_fixture",
    "fixture_identity",
    "fixture_key",
    "remove_fixture",
    "stamped_key",
    "write_fixture",
    "unreadable_array_message",
    "DataMismatchError",
    "ShardingFile",
    "abstract_from_checkpoint",
    "abstract_pytree",
    "build_mesh",
    "build_pytree",
    "check_loaded_shardings",
    "leaf_name",
    "load_existing",
    "pytree_checksums",
    "read_sharding_config",
    "reading_checkpoint",
    "safetensors_name",
    "synthetic_pytree",
    "verify_pytree",
    "write_safetensors",
    "write_sharding_config",
]
