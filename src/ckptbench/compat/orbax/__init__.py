"""Orbax's benchmark framework (`orbax.checkpoint._src.testing.benchmarks`) on ckptbench.

A generator module written for Orbax's framework runs under `ckptbench run`
once its imports name this package instead: `ckptbench port FILE` makes that
change (docs/migrating-from-orbax.md). The sub-packages mirror Orbax's
(`core.core`, `core.metric`, `core.pytree_utils`, `core.mesh_utils`,
`core.checkpoint_generation`, `core.inventory`, `core.configs`,
`core.multihost`, `core.directory_setup`, `core.backends`,
`core.config_parsing`, `core.device_mesh`, `core.baseline`,
`core.metrics_manager`, `core.run_manifest`, `core.markdown_cards`,
`v1.benchmark`, `v1.multi_slice_util`); their names are ckptbench's where
ckptbench has one.
"""
