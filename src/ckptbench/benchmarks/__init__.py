"""Built-in benchmarks. They use only ckptbench's public API.

`BUILTINS` maps a short name usable as `generator:` in a suite to an import
path; `ORBAX_ALIASES` maps the import paths of Orbax's in-tree framework to
ours, so suites written for it run unchanged.
"""

BUILTINS: dict[str, str] = {
    "save_restore": "ckptbench.benchmarks.save_restore.SaveRestoreBenchmark",
}

_ORBAX = "orbax.checkpoint._src.testing.benchmarks."
ORBAX_ALIASES: dict[str, str] = {
    _ORBAX + "v1.benchmark.Benchmark": BUILTINS["save_restore"],
}
