"""The engine's flag choices, apart from the engine (`ckptbench run --help` lists them without importing it)."""

# What num_repeats: auto waits for (`--decide_on`, `RunSettings.decide_on`).
DECIDE_ON = ("verdicts", "effects")
