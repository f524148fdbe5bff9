"""Orbax's `core.configs`: ckptbench's models, which take every key Orbax's dataclasses take (and a few
more, such as `preset`), validated (pydantic models rather than dataclasses)."""

from ckptbench import CheckpointConfig, MeshConfig, SimDeviceConfig

__all__ = ["CheckpointConfig", "MeshConfig", "SimDeviceConfig"]
