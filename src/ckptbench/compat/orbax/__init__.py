"""Orbax's benchmark framework (`orbax.checkpoint._src.testing.benchmarks`) on ckptbench.

A generator module written for Orbax's framework runs under `ckptbench run`
once its imports name this package instead: `ckptbench port FILE` makes that
change (docs/migrating-from-orbax.md). The sub-packages mirror Orbax's (`core.*`,
`v1.*`), each translating Orbax's objects onto ckptbench's.
"""
