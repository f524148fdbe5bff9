"""Compatibility packages: code written for another benchmark framework runs on ckptbench.

`ckptbench.compat.orbax` is laid out like Orbax's in-tree framework
(`orbax.checkpoint._src.testing.benchmarks`); `ckptbench port` rewrites a
module's imports to it. Like the built-ins, these packages use only the public
`ckptbench` API.
"""
