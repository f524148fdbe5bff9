"""`torchax`: a PyTorch model trained on JAX through torchax and checkpointed by Orbax's manager.

The flow of "A Deep Dive into Distributed Checkpointing: Using Orbax with Torchax
on TPUs", at a small size: the article's model (784 -> 120 -> 84 -> 10 linear
layers, the hidden widths times `width`) is moved to torchax's JAX device and
trained `num_steps` SGD steps on one fixed random batch; every
`save_interval_steps` steps its weights, converted with `.jax()`, are saved with
the step and epoch through `orbax.checkpoint.CheckpointManager`
(`step_prefix`, `max_to_keep`, `StandardCheckpointHandler`, `StandardSave`)
and waited for, as the article does. The latest step is then restored into a
template made from a fresh model's weights and assigned back to that model's
torchax parameters.

`library` picks who checkpoints the same model:
- `torchax_orbax`: the article's flow above.
- `torch_save`: the model trained in plain PyTorch on the CPU, each save a
  `torch.save(model.state_dict())` file; restored with `torch.load` and
  `load_state_dict`.
- `dcp`: the same with `torch.distributed.checkpoint.save` / `load` (one rank).

Every library writes `<step_prefix>_<step>` directories and keeps the latest
`max_to_keep`, the older ones removed inside the save (as the manager does).
Measured: `train_step`, `save` (the save call and the wait for it, the
article's "serialization & write time"; `_mean` per save), `save_blocking` (the
call alone), `restore` (files to the model's parameters) and `verify`. Verified:
the step directories left are the latest `max_to_keep` saved, the restored step
is the latest, and every restored parameter equals, bit for bit, the weights
saved at that step.

The article assigns restored arrays with `param._jax_array = array`; torchax
0.0.13 keeps a tensor's array in another attribute, so that line changes
nothing and training would resume from the fresh weights. Here the arrays are
assigned through the public `param.data` setter, and the check above would
catch a restore that changed nothing.

torchax needs torch 2.12 (0.0.13 reads `aten.prod.dim_Dimname` at import, gone
in torch 2.13): `pip install 'ckptbench[torchax]'` in an environment of its own,
or `ckptbench run torchax --with "ckptbench[torchax]"`. Without it,
`torchax_orbax` is skipped with the import error as its reason.
"""

from __future__ import annotations

import dataclasses
import functools
import pathlib
import shutil
from typing import Any

import numpy as np

import ckptbench
from ckptbench.benchmarks import _dcp

LIBRARIES = ("torchax_orbax", "torch_save", "dcp")
_IMAGE = 28 * 28
_HIDDEN = (120, 84)
_CLASSES = 10
_LEARNING_RATE = 0.1


@functools.cache
def _import_problem(module: str) -> str | None:
  try:
    imported = __import__(module)
  except Exception as e:  # torchax beside torch 2.13 fails with an AttributeError, not an ImportError
    return f"{module} does not import: {type(e).__name__}: {e}"
  if getattr(imported, "__file__", None) is None:  # a directory of that name on the path (an OUT, say)
    where = ", ".join(getattr(imported, "__path__", []))
    return f"{module} is not installed (`import {module}` finds only the directory {where})"
  return None


@dataclasses.dataclass(frozen=True, kw_only=True)
class TorchaxOptions(ckptbench.BenchmarkOptions):
  """Options of `torchax` (a list sweeps).

  Attributes:
    library: torchax_orbax | torch_save | dcp.
    num_steps: training steps per run.
    save_interval_steps: save after steps n, 2n, ... (the article: every 100 steps).
    max_to_keep: checkpoints kept, the latest ones (the article: 3).
    step_prefix: the step directories' prefix: `<step_prefix>_<step>`.
    width: the hidden layers' widths times this (1: the article's model, 0.4 MB of float32).
    batch_size: the training batch.
  """

  library: str | list[str] = "torchax_orbax"
  num_steps: int | list[int] = 6
  save_interval_steps: int | list[int] = 2
  max_to_keep: int | list[int] = 3
  step_prefix: str = "step"
  width: int | list[int] = 1
  batch_size: int | list[int] = 32

  def invalid_reason(self) -> str | None:
    if self.library not in LIBRARIES:
      return f"library must be one of {', '.join(LIBRARIES)}"
    if min(self.num_steps, self.save_interval_steps, self.max_to_keep, self.width, self.batch_size) < 1:
      return "num_steps, save_interval_steps, max_to_keep, width and batch_size must be at least 1"
    if self.save_interval_steps > self.num_steps:
      return f"save_interval_steps {self.save_interval_steps} > num_steps {self.num_steps}: nothing would be saved"
    if not self.step_prefix or "/" in self.step_prefix:
      return "step_prefix must be a non-empty name without '/'"
    return None

  def unsupported_reason(self) -> str | None:
    # Asked when the run starts, after JAX's flags are set: importing torchax opens JAX's devices.
    return _import_problem("torch") or (_import_problem("torchax") if self.library == "torchax_orbax" else None)


def _model(width: int):
  """The article's model, its hidden layers `width` times wider."""
  import torch
  from torch import nn

  class ArticleModel(nn.Module):
    def __init__(self):
      super().__init__()
      self.fc1 = nn.Linear(_IMAGE, _HIDDEN[0] * width)
      self.fc2 = nn.Linear(_HIDDEN[0] * width, _HIDDEN[1] * width)
      self.fc3 = nn.Linear(_HIDDEN[1] * width, _CLASSES)

    def forward(self, x):
      x = x.view(-1, _IMAGE)
      x = torch.relu(self.fc1(x))
      x = torch.relu(self.fc2(x))
      return self.fc3(x)

  return ArticleModel()


def _batch(batch_size: int):
  import torch

  generator = torch.Generator().manual_seed(1)
  images = torch.randn(batch_size, _IMAGE, generator=generator)
  return images, torch.randint(0, _CLASSES, (batch_size,), generator=generator)


def _host(tensor) -> np.ndarray:
  """A parameter's values on the host: a torchax tensor's JAX array, or a CPU tensor's."""
  return np.asarray(tensor.jax()) if hasattr(tensor, "jax") else tensor.detach().cpu().numpy().copy()


class _Checkpoints:
  """Step directories under one root, the latest `keep` kept."""

  def __init__(self, root: pathlib.Path, prefix: str, keep: int):
    self.root, self.prefix, self.keep = root, prefix, keep
    self.saved: list[int] = []

  def path(self, step: int) -> pathlib.Path:
    return self.root / f"{self.prefix}_{step}"

  def prune(self) -> None:
    for step in self.saved[: -self.keep]:
      shutil.rmtree(self.path(step), ignore_errors=True)

  def on_disk(self) -> list[int]:
    start = f"{self.prefix}_"
    found = [p.name[len(start) :] for p in self.root.iterdir() if p.name.startswith(start)]
    return sorted(int(s) for s in found if s.isdigit())


class _TorchaxOrbax:
  """The article's flow: the model on torchax, its `.jax()` weights in Orbax's CheckpointManager."""

  def __init__(self, options: TorchaxOptions, root: pathlib.Path):
    import orbax.checkpoint as ocp
    import torch
    import torchax
    from torchax import interop

    self._ocp, self._torch, self._interop = ocp, torch, interop
    self.notes: list[str] = []
    self.env = torchax.default_env()
    torch.manual_seed(0)
    with self.env:
      self.model = _model(options.width).to("jax")
      x, y = (t.to("jax") for t in _batch(options.batch_size))

      def loss(weights, x, y):
        return torch.nn.functional.cross_entropy(torch.func.functional_call(self.model, weights, (x,)), y)

      value_and_grad = interop.jax_jit(interop.jax_value_and_grad(loss))
    self._step = lambda weights: value_and_grad(weights, x, y)
    self.manager = ocp.CheckpointManager(
        root,
        item_handlers=ocp.StandardCheckpointHandler(),
        options=ocp.CheckpointManagerOptions(
            max_to_keep=options.max_to_keep, save_interval_steps=1, step_prefix=options.step_prefix
        ),
    )

  def _jax_weights(self, model) -> dict[str, Any]:
    return {name: tensor.jax() for name, tensor in model.state_dict().items()}

  def train_step(self) -> None:
    with self.env:
      weights = dict(self.model.named_parameters())
      _, grads = self._step(weights)
      with self._torch.no_grad():
        for name, param in self.model.named_parameters():
          param.data = weights[name] - _LEARNING_RATE * grads[name]
      for param in self.model.parameters():  # the step is timed to its end, not to its dispatch
        param.jax().block_until_ready()

  def weights(self) -> dict[str, np.ndarray]:
    return {name: _host(p) for name, p in self.model.named_parameters()}

  def save(self, step: int, epoch: int, metrics: ckptbench.Metrics) -> None:
    state = {"weights": self._jax_weights(self.model), "epoch": epoch, "global_step": step}
    with metrics.measure("save"):
      with metrics.measure("save_blocking"):
        self.manager.save(step, args=self._ocp.args.StandardSave(state))
      self.manager.wait_until_finished()

  def steps(self) -> list[int]:
    return sorted(self.manager.all_steps())

  def restore(self, step: int, width: int) -> tuple[Any, int]:
    """(a fresh model with `step`'s weights, the step read back)."""
    self._torch.manual_seed(1)  # other initial weights than the trained model's
    with self.env:
      fresh = _model(width).to("jax")
      template = {"weights": self._jax_weights(fresh), "epoch": 0, "global_step": 0}
      restored = self.manager.restore(step, args=self._ocp.args.StandardRestore(template))
      with self._torch.no_grad():
        for name, param in fresh.named_parameters():
          param.data = self._interop.torch_view(restored["weights"][name])
    return fresh, int(restored["global_step"])

  def close(self) -> None:
    self.manager.close()


class _PlainTorch:
  """The same model and batch in plain PyTorch on the CPU, saved by torch.save or DCP."""

  def __init__(self, options: TorchaxOptions, root: pathlib.Path):
    import torch

    self._torch, self.library = torch, options.library
    self.notes: list[str] = []
    if self.library == "dcp":
      import torch.distributed.checkpoint as dcp

      ckptbench.torch_process_group()
      self._dcp = dcp
    torch.manual_seed(0)
    self.model = _model(options.width)
    self._x, self._y = _batch(options.batch_size)
    self._optimizer = torch.optim.SGD(self.model.parameters(), lr=_LEARNING_RATE)
    self.checkpoints = _Checkpoints(root, options.step_prefix, options.max_to_keep)
    root.mkdir(parents=True, exist_ok=True)

  def train_step(self) -> None:
    self._optimizer.zero_grad()
    self._torch.nn.functional.cross_entropy(self.model(self._x), self._y).backward()
    self._optimizer.step()

  def weights(self) -> dict[str, np.ndarray]:
    return {name: _host(p) for name, p in self.model.named_parameters()}

  def save(self, step: int, epoch: int, metrics: ckptbench.Metrics) -> None:
    state = {"weights": self.model.state_dict(), "epoch": epoch, "global_step": step}
    path = self.checkpoints.path(step)
    with metrics.measure("save"), metrics.measure("save_blocking"):
      if self.library == "dcp":
        self._dcp.save(state, storage_writer=self._dcp_writer(path))
      else:
        path.mkdir()
        self._torch.save(state, path / "model.pt")
      self.checkpoints.saved.append(step)
      self.checkpoints.prune()

  def _dcp_writer(self, path: pathlib.Path):
    if not _dcp.beside_torchax():
      return self._dcp.FileSystemWriter(path)
    # torchax registers its device as torch's privateuse1 backend ("jax"), so DCP's default
    # writer picks its overlapping device loader, which calls torch.jax.current_stream(): torchax
    # has none (AttributeError). No copy-ahead selects the serial loader, the one DCP uses on a
    # CPU-only machine without torchax.
    self.notes = [_dcp.BESIDE_TORCHAX_NOTE]
    return self._dcp.FileSystemWriter(path, per_thread_copy_ahead=0)

  def steps(self) -> list[int]:
    return self.checkpoints.on_disk()

  def restore(self, step: int, width: int) -> tuple[Any, int]:
    self._torch.manual_seed(1)
    fresh = _model(width)
    path = self.checkpoints.path(step)
    if self.library == "dcp":
      state = {"weights": fresh.state_dict(), "epoch": 0, "global_step": 0}
      self._dcp.load(state, checkpoint_id=str(path))
    else:
      state = self._torch.load(path / "model.pt", weights_only=True)
    fresh.load_state_dict(state["weights"])
    return fresh, int(state["global_step"])

  def close(self) -> None:
    pass


def _check_restored(library: str, fresh, step: int, read_step: int, saved: dict[str, np.ndarray]) -> None:
  if read_step != step:
    raise ckptbench.DataMismatchError(f"torchax library={library}: restored global_step {read_step}, expected {step}")
  restored = {name: _host(p) for name, p in fresh.named_parameters()}
  try:
    ckptbench.verify_pytree(saved, restored)
  except ckptbench.DataMismatchError as e:
    raise ckptbench.DataMismatchError(f"torchax library={library}: step {step}: {e}") from None


@ckptbench.benchmark_options(TorchaxOptions)
class TorchaxBenchmark(ckptbench.BenchmarksGenerator):
  """Trains the article's model and checkpoints it every few steps; see the module docstring."""

  builtin = ckptbench.Builtin(
      name="torchax",
      measures="a torch model on JAX through torchax, trained and saved every few steps by Orbax's `CheckpointManager` (the torchax article's flow), restored into the model, beside `torch.save` and DCP, in a venv of its own (torch 2.12.1)",
      example="torchax.yaml",
      saves_with=("orbax", "torch"),
      extras=("torchax",),
  )

  def test_fn(self, context: ckptbench.TestContext) -> ckptbench.TestResult:
    options = context.options
    problem = options.invalid_reason() or options.unsupported_reason()
    if problem:
      raise ckptbench.CkptbenchError(f"torchax: {problem}")
    if "://" in str(context.path):
      raise ckptbench.CkptbenchError("torchax writes local directories only")
    metrics = ckptbench.Metrics()
    trainer_class = _TorchaxOrbax if options.library == "torchax_orbax" else _PlainTorch
    trainer = trainer_class(options, context.path / "checkpoints")
    try:
      saved_steps: list[int] = []
      saved_weights: dict[str, np.ndarray] = {}
      for step in range(1, options.num_steps + 1):
        with metrics.measure("train_step", ["time"]):
          trainer.train_step()
        if step % options.save_interval_steps == 0:
          with context.trace("save"):
            trainer.save(step, epoch=1, metrics=metrics)
          saved_steps.append(step)
          saved_weights = trainer.weights()
      kept = saved_steps[-options.max_to_keep :]
      if trainer.steps() != kept:
        raise ckptbench.DataMismatchError(
            f"torchax library={options.library}: steps kept are {trainer.steps()}, expected the latest"
            f" {options.max_to_keep} of {saved_steps}: {kept}"
        )
      ckptbench.evict_for_load(context.path / "checkpoints", metrics, "restore", True)
      with metrics.measure("restore"), context.trace("restore"):
        fresh, read_step = trainer.restore(kept[-1], options.width)
      with metrics.measure("verify", ["time"]):
        _check_restored(options.library, fresh, kept[-1], read_step, saved_weights)
      metrics.record("save", "9_other/saved_steps", len(saved_steps), "count")
      metrics.record("save", "9_other/parameters", sum(w.size for w in saved_weights.values()), "count")
    finally:
      trainer.close()
    return ckptbench.TestResult(metrics=metrics, notes=list(trainer.notes))
