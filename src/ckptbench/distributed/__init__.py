"""Multi-process runs on JAX's own distributed runtime."""

from ckptbench.distributed._coordinator import Coordinator, LocalCoordinator

__all__ = ["Coordinator", "LocalCoordinator"]
