"""What a built-in generator declares about itself: the record the catalogue is read from."""

from __future__ import annotations

import dataclasses

# The libraries a checkpoint can be written through; `saves_with` names some of them.
SAVING_LIBRARIES = ("orbax", "safetensors", "tensorstore", "torch")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Builtin:
  """A built-in generator's entry in the catalogue, declared on its class.

  Every generator class in a public module of `ckptbench/benchmarks/` declares
  `builtin = ckptbench.Builtin(...)` with literal arguments: the catalogue reads
  them from the module's source without importing it (a suite that names one
  built-in imports only that module), and everything that lists built-ins is
  derived from them: short names and Orbax's import paths, the storage check,
  docs/builtins.md's table, the tests of examples and cold loads.

  Attributes:
    name: the short name a suite gives as `generator:`.
    measures: what it measures, one line (docs/builtins.md's table).
    example: the suite under `examples/` that shows it.
    saves_with: the libraries its checkpoints are written through (of
      `SAVING_LIBRARIES`); empty when it writes none. A built-in that saves only
      through Orbax is refused before a run on a store Orbax cannot write.
    cold_load: the op of its timed load of checkpoint files, evicted from the
      page cache before it unless its `cold_cache` option is false; empty when
      it reads no checkpoint file (and then it has no `cold_cache` option).
    extras: the pip extras it needs (`pip install 'ckptbench[torch]'`).
    orbax_alias: the import path of the generator of Orbax's in-tree framework
      it stands in for, after `orbax.checkpoint._src.testing.benchmarks.`.
    also_named: more short names for it.
    processes: the processes it needs at least (peers restoring from each other): a run of fewer is
      refused before anything runs, naming `ckptbench launch -n N`.
  """

  name: str
  measures: str
  example: str
  saves_with: tuple[str, ...] = ()
  cold_load: str = ""
  extras: tuple[str, ...] = ()
  orbax_alias: str = ""
  also_named: tuple[str, ...] = ()
  processes: int = 1

  def __post_init__(self):
    unknown = sorted(set(self.saves_with) - set(SAVING_LIBRARIES))
    if unknown:
      raise ValueError(f"Builtin {self.name!r}: saves_with names {unknown}; known: {', '.join(SAVING_LIBRARIES)}")

  @property
  def names(self) -> tuple[str, ...]:
    return (self.name, *self.also_named)

  @property
  def saves_only_with_orbax(self) -> bool:
    return self.saves_with == ("orbax",)
