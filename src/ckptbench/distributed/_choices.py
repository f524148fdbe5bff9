"""The values the command line's flags offer (`--distributed`, `launch --emit` and `--submit`, `--accelerator`),
apart from the code that takes them: the parser lists them without importing it."""

DISTRIBUTED_MODES: tuple[str, ...] = ("off", "env", "auto")
MANIFEST_KINDS: tuple[str, ...] = ("k8s-jobset", "slurm")
SUBMIT_KINDS: tuple[str, ...] = ("slurm",)
ACCELERATORS: tuple[str, ...] = ("cpu", "gpu", "tpu")
