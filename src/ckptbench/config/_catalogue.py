"""The catalogue of built-in benchmarks, by import path (nothing is imported here).

`BUILTINS` maps a short name usable as `generator:` in a suite to an import
path; `ORBAX_ALIASES` maps the import paths of Orbax's in-tree framework to
ours, so suites written for it run unchanged.
"""

BUILTINS: dict[str, str] = {
    "save_restore": "ckptbench.benchmarks.save_restore.SaveRestoreBenchmark",
    "resharding": "ckptbench.benchmarks.resharding.ReshardingBenchmark",
    "restore_and_broadcast": "ckptbench.benchmarks.restore_and_broadcast.RestoreAndBroadcastBenchmark",
    "replica_parallel": "ckptbench.benchmarks.replica_parallel.ReplicaParallelBenchmark",
    "checkpoint_manager": "ckptbench.benchmarks.checkpoint_manager.CheckpointManagerBenchmark",
    "preemption_recovery": "ckptbench.benchmarks.preemption_recovery.PreemptionRecoveryBenchmark",
    "pytorch": "ckptbench.benchmarks.pytorch.PyTorchBenchmark",
    "storage": "ckptbench.benchmarks.storage.StorageBenchmark",
}

_ORBAX = "orbax.checkpoint._src.testing.benchmarks."
ORBAX_ALIASES: dict[str, str] = {
    _ORBAX + "v1.benchmark.Benchmark": BUILTINS["save_restore"],
    _ORBAX + "v1.resharding_benchmark.ReshardingBenchmark": BUILTINS["resharding"],
    _ORBAX + "v1.restore_and_broadcast_benchmark.RestoreAndBroadcastBenchmark": BUILTINS[
        "restore_and_broadcast"
    ],
    _ORBAX + "v1.replica_parallel_multislice_benchmark.ReplicaParallelMultislice": BUILTINS[
        "replica_parallel"
    ],
}
