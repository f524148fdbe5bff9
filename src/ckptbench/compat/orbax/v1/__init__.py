"""Orbax's `benchmarks.v1` helpers on ckptbench."""
