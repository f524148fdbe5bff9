"""Orbax's `core.configs` on ckptbench: the suite's checkpoint, mesh and `simdevice:` configs.

ckptbench's models take every key Orbax's dataclasses take (and a few more,
such as `preset`); they are validated pydantic models rather than dataclasses.
"""

from ckptbench import CheckpointConfig, MeshConfig, SimDeviceConfig

__all__ = ["CheckpointConfig", "MeshConfig", "SimDeviceConfig"]
