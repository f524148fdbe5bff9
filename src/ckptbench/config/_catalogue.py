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
    "mlperf_storage": "ckptbench.benchmarks.mlperf_storage.MlperfStorageBenchmark",
    "training_interference": (
        "ckptbench.benchmarks.training_interference.TrainingInterferenceBenchmark"
    ),
    "pytree_checkpoint": "ckptbench.benchmarks.pytree_checkpoint.PyTreeCheckpointBenchmark",
    "array_handler": "ckptbench.benchmarks.array_handler.ArrayHandlerBenchmark",
    "orbax_load": "ckptbench.benchmarks.orbax_load.OrbaxLoadBenchmark",
    "safetensors_load": "ckptbench.benchmarks.safetensors_load.SafetensorsLoadBenchmark",
    "deleter": "ckptbench.benchmarks.deleter.DeleterBenchmark",
    "checkpoint_policy": "ckptbench.benchmarks.checkpoint_policy.CheckpointPolicyBenchmark",
    # `pytorch` with DCP and the defaults of Orbax's PyTorch benchmark.
    "pytorch_dcp": "ckptbench.benchmarks.pytorch.PyTorchCheckpointBenchmark",
    # The torchax article's flow: a torch model on JAX, Orbax's CheckpointManager, beside torch.save and DCP.
    "torchax": "ckptbench.benchmarks.torchax_training.TorchaxBenchmark",
    "single_replica": "ckptbench.benchmarks.single_replica.SingleReplicaBenchmark",
    "checkpointer_cancel": "ckptbench.benchmarks.checkpointer_cancel.CheckpointerCancelBenchmark",
    "v1_checkpointer_cancel": "ckptbench.benchmarks.checkpointer_cancel.V1CheckpointerCancelBenchmark",
    "storage": "ckptbench.benchmarks.storage.StorageBenchmark",
    "multislice_broadcast": "ckptbench.benchmarks.multislice_broadcast.MultisliceBroadcastBenchmark",
    "replica_parallel_multislice": "ckptbench.benchmarks.replica_parallel.ReplicaParallelBenchmark",
    "snapshotter": "ckptbench.benchmarks.snapshotter.SnapshotterBenchmark",
    "p2p_checkpoint_manager": "ckptbench.benchmarks.p2p_checkpoint_manager.P2PCheckpointManagerBenchmark",
    "multihost_dispatchers": "ckptbench.benchmarks.multihost_dispatchers.MultihostDispatchersBenchmark",
    "emergency_checkpoint_manager": (
        "ckptbench.benchmarks.emergency_checkpoint_manager.EmergencyCheckpointManagerBenchmark"
    ),
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
    _ORBAX + "pytree_checkpoint_benchmark.PyTreeCheckpointBenchmark": BUILTINS["pytree_checkpoint"],
    _ORBAX + "array_handler_benchmark.ArrayHandlerBenchmark": BUILTINS["array_handler"],
    _ORBAX + "checkpoint_manager_benchmark.CheckpointManagerBenchmark": BUILTINS["checkpoint_manager"],
    _ORBAX + "orbax_load.load_benchmark.OrbaxLoadBenchmark": BUILTINS["orbax_load"],
    _ORBAX + "safetensors.load_benchmark.SafetensorLoadBenchmark": BUILTINS["safetensors_load"],
    _ORBAX + "deleter_benchmark.DeleterBenchmark": BUILTINS["deleter"],
    _ORBAX + "checkpoint_policy_benchmark.CheckpointPolicyBenchmark": BUILTINS["checkpoint_policy"],
    _ORBAX + "pytorch_checkpoint_benchmark.PyTorchCheckpointBenchmark": BUILTINS["pytorch_dcp"],
    _ORBAX + "single_replica_benchmark.SingleReplicaBenchmark": BUILTINS["single_replica"],
    _ORBAX + "v0_checkpointer_cancel_benchmark.V0CheckpointerCancelBenchmark": BUILTINS["checkpointer_cancel"],
    _ORBAX + "v1_checkpointer_cancel_benchmark.V1CheckpointerCancelBenchmark": BUILTINS["v1_checkpointer_cancel"],
    _ORBAX + "emergency_checkpoint_manager_benchmark.EmergencyCheckpointManagerBenchmark": BUILTINS[
        "emergency_checkpoint_manager"
    ],
    _ORBAX + "multislice_broadcast_benchmark.MultisliceBroadcastBenchmark": BUILTINS["multislice_broadcast"],
    _ORBAX + "v1.snapshotter_benchmark.SnapshotterBenchmark": BUILTINS["snapshotter"],
    _ORBAX + "p2p_checkpoint_manager_benchmark.P2pCheckpointManagerBenchmark": BUILTINS["p2p_checkpoint_manager"],
    _ORBAX + "multihost_dispatchers_benchmark.MultihostDispatchersBenchmark": BUILTINS["multihost_dispatchers"],
}
