"""Compatibility packages: code written for another benchmark framework runs on ckptbench.

`ckptbench.compat.orbax` is laid out like Orbax's in-tree framework and translates its objects onto
ckptbench's; `ckptbench port` rewrites a module's imports to it. These packages use only the public
`ckptbench` API.
"""
