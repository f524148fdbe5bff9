"""Built-in benchmarks. They use only ckptbench's public API, as a user's own class does.

Each generator class declares its catalogue entry (`builtin = ckptbench.Builtin(...)`), which
`ckptbench.config._catalogue` reads from the source; a module is imported only when a suite names
one of its generators. Private helper modules start with `_`.
"""
