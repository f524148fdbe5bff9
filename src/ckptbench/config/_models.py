"""The suite schema: frozen pydantic models, validated once at load time."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationInfo,
    WrapValidator,
    field_validator,
    model_validator,
)

from ckptbench.api import mesh_name, spec_text

PositiveInt = Annotated[StrictInt, Field(gt=0)]
NonNegativeInt = Annotated[StrictInt, Field(ge=0)]
PositiveFloat = Annotated[float, Field(gt=0), Field(strict=True)]

# How synthetic arrays are filled. Orbax compresses by default, so content
# changes the numbers: "normal" resembles trained weights (compresses ~1.3x),
# "random_bits" is incompressible (worst case for storage), "zeros" is the best
# case (compresses to almost nothing).
Fill = Literal["normal", "random_bits", "zeros"]

# Axis names of one array dimension: none (replicated), one axis, or several.
DimSharding = StrictStr | None | tuple[StrictStr, ...]


class _Model(BaseModel):
  model_config = ConfigDict(extra="forbid", frozen=True)


class ArraySpec(_Model):
  """One synthetic array: dtype, global shape and a PartitionSpec-like sharding."""

  dtype: StrictStr
  shape: tuple[PositiveInt, ...]
  sharding: tuple[DimSharding, ...] = ()

  @model_validator(mode="after")
  def _sharding_fits_shape(self) -> "ArraySpec":
    if len(self.sharding) > len(self.shape):
      raise ValueError(
          f"sharding has {len(self.sharding)} entries but the shape {list(self.shape)} has"
          f" only {len(self.shape)} dimensions"
      )
    return self

  def dim_axes(self) -> list[tuple[str, ...]]:
    """The mesh axes of each dimension (empty tuple when not sharded)."""
    out: list[tuple[str, ...]] = []
    for entry in self.sharding:
      out.append(() if entry is None else (entry,) if isinstance(entry, str) else tuple(entry))
    return out + [()] * (len(self.shape) - len(out))

  @property
  def num_elements(self) -> int:
    return math.prod(self.shape)


class ScalarSpec(_Model):
  """A non-array leaf: `"int"` or `"str"` in the YAML."""

  kind: Literal["int", "str"]


class MeshConfig(_Model):
  """A device mesh: named axes with per-axis degrees within (ICI) and across (DCN) slices."""

  name: StrictStr | None = None  # how tables call it (default: its axes, fsdp4x2)
  mesh_axes: tuple[StrictStr, ...] = Field(min_length=1)
  ici_parallelism: dict[StrictStr, PositiveInt] = {}
  dcn_parallelism: dict[StrictStr, PositiveInt] | None = None
  allow_split_physical_axes: StrictBool = False
  process_is_granule: StrictBool = False

  @field_validator("mesh_axes")
  @classmethod
  def _unique_axes(cls, axes: tuple[str, ...]) -> tuple[str, ...]:
    if len(set(axes)) != len(axes):
      raise ValueError(f"mesh_axes repeats a name: {list(axes)}")
    return axes

  @field_validator("ici_parallelism", "dcn_parallelism")
  @classmethod
  def _axes_known(cls, degrees: dict[str, int] | None, info: ValidationInfo):
    axes = info.data.get("mesh_axes")
    for axis in degrees or {}:
      if axes is not None and axis not in axes:
        raise ValueError(f"axis {axis!r} is not in mesh_axes {list(axes)}")
    return degrees

  def axis_sizes(self) -> dict[str, int]:
    """Global size of each axis: ICI degree times DCN degree (1 where unset)."""
    dcn = self.dcn_parallelism or {}
    return {a: self.ici_parallelism.get(a, 1) * dcn.get(a, 1) for a in self.mesh_axes}

  @property
  def num_devices(self) -> int:
    return math.prod(self.axis_sizes().values())

  def describe(self) -> str:
    return self.name or mesh_name(self.model_dump())

  def identity(self) -> dict[str, Any]:
    """What the mesh is, as its benchmarks' keys and records hold it (a name given is part of it)."""
    return self.model_dump(mode="json", exclude=set() if self.name else {"name"})


class CheckpointConfig(_Model):
  """The checkpoint data: synthetic (`spec` or `preset`), or an existing checkpoint (`path`)."""

  name: StrictStr | None = None  # how tables call it (default: what differs from the suite's other configs)
  spec: dict[str, Any] | None = None
  path: StrictStr | None = None
  preset: StrictStr | None = None
  scale: PositiveFloat = 1.0
  include_optimizer_state: StrictBool = False
  random_seed: StrictInt = 0
  fill: Fill = "normal"
  sharding_config_path: StrictStr | None = None
  load_with_colocated_python: StrictBool = False

  @model_validator(mode="after")
  def _one_source(self) -> "CheckpointConfig":
    given = [k for k in ("spec", "path", "preset") if getattr(self, k) is not None]
    if len(given) > 1:
      raise ValueError(f"give only one of spec, path and preset (got {' and '.join(given)})")
    if self.sharding_config_path is not None and self.path is None:
      raise ValueError("sharding_config_path needs path (it gives the shardings of that checkpoint)")
    return self

  def has_data(self) -> bool:
    """False for no source at all or Orbax's `spec: {}` (the benchmark makes its own data)."""
    return self.path is not None or self.preset is not None or bool(self.spec)

  def describe(self) -> str:
    """What the data is: `preset=llama3_8b@0.01`, or a spec's arrays by dtype and shape (a `name:` first)."""
    if self.path is not None:
      text = f"path={self.path}"
    elif self.preset is not None:
      text = f"preset={self.preset}@{self.scale:g}"
    elif self.spec:
      text = f"spec: {spec_text(self.spec)}"
    else:
      text = "none"
    return f"{self.name}: {text}" if self.name else text

  def identity(self) -> dict[str, Any]:
    """What the data is, as its benchmarks' keys and records hold it (a name given is part of it)."""
    return self.model_dump(mode="json", exclude=set() if self.name else {"name"})


class SimDeviceConfig(_Model):
  """Orbax 0.12.8's `simdevice:` block: a simulated TPU cluster (its SimDevice plugin fabricates
  the devices and skips the math). ckptbench runs it on as many simulated CPU devices, in
  `num_processes` local processes, with real data and real math (config/_simdevice.py)."""

  device_type: StrictStr = Field(min_length=1)  # SimDevice's hardware profile: "v6e", "v7x", ...
  topology: tuple[PositiveInt, ...]  # the chip mesh: exactly three counts [x, y, z]
  num_processes: PositiveInt = 1  # simulated hosts; the chips split evenly between them
  # SimDevice fills host reads of buffers it never computed with values of this seed (real data here).
  fabricated_fill_seed: Annotated[StrictInt, Field(ge=0, lt=2**32)] | None = None

  @field_validator("topology")
  @classmethod
  def _three_dimensions(cls, topology: tuple[int, ...]) -> tuple[int, ...]:
    if len(topology) != 3:
      raise ValueError(f"topology is three chip counts [x, y, z], got {list(topology)}")
    return topology

  @field_validator("num_processes")
  @classmethod
  def _chips_split_evenly(cls, processes: int, info: ValidationInfo) -> int:
    topology = info.data.get("topology")
    if topology is not None and math.prod(topology) % processes:
      raise ValueError(
          f"the topology's {math.prod(topology)} chips do not split evenly into num_processes={processes}")
    return processes

  @property
  def num_devices(self) -> int:
    return math.prod(self.topology)

  def describe(self) -> str:
    """`tpu v6e 2x2x1`."""
    return f"tpu {self.device_type} {'x'.join(map(str, self.topology))}"


class FixtureConfig(_Model):
  """Files written before the runs (a checkpoint to load, safetensors files): where they go and in which
  format. `run` writes them when they are missing or hold other data (data/_fixture.py), as `ckptbench
  fixture` does."""

  directory: StrictStr = Field(min_length=1)
  format: Literal["orbax", "safetensors"] = "orbax"
  shard_mb: PositiveFloat = 64.0  # safetensors: the size of each file

  @property
  def written(self) -> str:
    """What `ckptbench fixture` writes there (and what is missing without it)."""
    return f"{self.directory.rstrip('/')}/{'checkpoint' if self.format == 'orbax' else 'safetensors'}"

  def command(self, suite_file: str) -> str:
    """The `ckptbench fixture` command line that writes it."""
    flags = "" if self.format == "orbax" else f" --format safetensors --shard_size {self.shard_mb:g}MiB"
    return f"ckptbench fixture {suite_file} -o {self.directory}{flags}"


class BenchmarkEntry(_Model):
  generator: StrictStr = Field(min_length=1)
  options: dict[StrictStr, Any] = {}


def _count_or_auto(value: Any, handler: Any) -> Any:
  """`num_repeats`: "auto", or validated as a count (one error message, not one per alternative)."""
  return "auto" if value == "auto" else handler(value)


# Auto repeats stop adding rounds that would end past this. Showing two equal variants equivalent
# within +-10% beside a CPU hog and a disk writer takes about 170 rounds (a 16 MiB pair's round:
# 1.6 s there): 180 s left most A/A comparisons inconclusive (docs/verdicts.md).
DEFAULT_TIME_BUDGET_S = 300.0


class SuiteConfig(_Model):
  """A whole suite file."""

  suite_name: StrictStr = Field(min_length=1)
  # "auto": rounds until every headline comparison is decided or `time_budget_s` is spent (engine/loop/_rounds.py).
  # Unset: auto for a sweep or a baseline comparison, else 1 (see `repeats`).
  num_repeats: Annotated[PositiveInt | None, WrapValidator(_count_or_auto)] = None  # or "auto"
  time_budget_s: PositiveFloat | None = None  # auto repeats' budget; unset: DEFAULT_TIME_BUDGET_S
  # Unset: one warm-up per benchmark when it has repeats to compare (see `warmups`).
  num_warmups: NonNegativeInt | None = None
  # Unset: interleaved (a fresh random order each round) with auto repeats, else back to back.
  interleave_repeats: StrictBool | None = None
  # A warm-up before the first run of each generator on each mesh and data, when there are no others.
  # Unset: on unless `num_warmups` is given (see `warmup_each_mesh_on`).
  warmup_each_mesh: StrictBool | None = None
  timeout_s: PositiveFloat | None = None
  checkpoint_config: CheckpointConfig | None = None
  checkpoint_configs: list[CheckpointConfig] | None = Field(default=None, min_length=1)
  mesh_config: MeshConfig | None = None
  mesh_configs: list[MeshConfig] | None = Field(default=None, min_length=1)
  benchmarks: list[BenchmarkEntry] = Field(min_length=1)
  baseline_capture_path: StrictStr | None = None
  baseline_path: StrictStr | None = None
  # Orbax's suites set this key, but its framework never reads it. Here it
  # chooses whether benchmarks sharing a mesh and checkpoint config also share
  # one copy of the data (true) or each run builds its own (false).
  reuse_checkpoint: StrictBool = True
  # Keep every run's checkpoint in OUT (default: each is removed once measured and verified).
  keep_checkpoints: StrictBool = False
  checkpoint_root: StrictStr | None = None  # gs://, s3:// or a directory; results stay in OUT
  # Swept option values of the variant the others are compared with (default: the first).
  reference: dict[StrictStr, Any] | None = None
  # Swept option values of the floor variant (what the storage itself costs, such as `libraries`'
  # `plain`): summary.json gives each variant's share of it (docs/verdicts.md, "The floor").
  floor: dict[StrictStr, Any] | None = None
  # Orbax 0.12.8's simulated TPU cluster, run here on CPU devices (config/_simdevice.py).
  simdevice: SimDeviceConfig | None = None
  fixture: FixtureConfig | None = None  # what `ckptbench fixture` writes before the run

  def repeats(self, compares: bool) -> int | str:
    """`num_repeats` as the run uses it: unset is "auto" when the run compares anything
    (several benchmarks, or a baseline), else 1."""
    if self.num_repeats is not None:
      return self.num_repeats
    return "auto" if compares else 1

  def time_budget(self, asked: float | None = None) -> float:
    """The time budget of auto repeats: the flag's (`asked`), else the suite's, else the default."""
    return asked or self.time_budget_s or DEFAULT_TIME_BUDGET_S

  def warmups(self, repeats: int | str) -> int:
    """One warm-up run per benchmark when there are repeats to compare and `num_warmups` is unset.

    The first save and load of a process pay for imports, thread pools, JIT
    and page-cache state (2.4 s against 1.05 s in the quick start); counting
    that run skews the median of 3 and every spread.
    """
    if self.num_warmups is not None:
      return self.num_warmups
    return 1 if repeats == "auto" or int(repeats) > 1 else 0

  def interleaved(self, repeats: int | str) -> bool:
    return self.interleave_repeats if self.interleave_repeats is not None else repeats == "auto"

  def warmup_each_mesh_on(self) -> bool:
    """A single repeat still must not count the first compilation and allocation on a new mesh
    (single_replica's first save per mesh: 0.47-1.44 s against ~0.02 s)."""
    return self.warmup_each_mesh if self.warmup_each_mesh is not None else self.num_warmups is None

  def all_checkpoint_configs(self) -> list[CheckpointConfig]:
    if self.checkpoint_configs is not None:
      return list(self.checkpoint_configs)
    return [self.checkpoint_config or CheckpointConfig()]

  def all_mesh_configs(self) -> list[MeshConfig | None]:
    if self.mesh_configs is not None:
      return list(self.mesh_configs)
    return [self.mesh_config]
