"""Built-in benchmarks. They use only ckptbench's public API, as a user's own class does.

Their short names and the Orbax in-tree import paths that map to them are in
`ckptbench.config._catalogue`; the modules are imported only when a suite names one.
"""
