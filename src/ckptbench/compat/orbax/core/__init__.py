"""Orbax's `benchmarks.core` modules on ckptbench."""
