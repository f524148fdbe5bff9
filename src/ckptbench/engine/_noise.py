"""Quiet the machine before a run, and record how noisy it was while the run ran.

Before each run the dirty pages (earlier repeats' checkpoints among them) are
written back and waited for (`os.sync`), so a save does not pay for the one
before it, and Python's garbage is collected, so a collection the run before
made due does not pause this one. What survives that collection is frozen
(`gc.freeze`): the next collection, before the next run or one the run's own
allocations trigger, looks only at objects made since, not again at every
module JAX, Orbax and pydantic loaded (about 0.1 s of CPU a run, 150,000
objects and more); `close` unfreezes them when the suite ends. The runs always
see the collector enabled, as a training process has it, even where the caller
paused it; `close` puts back the state it found. A process that only starts a
run (`ckptbench run`) pauses it from its first line with `pause_while_starting`:
JAX, Orbax, TensorStore and pydantic then make their objects unwalked (several
full collections of a growing heap, for a few thousand objects of garbage), and
the first run freezes them without the full collection (0.13 s here). Each run then records what else the machine did meanwhile, as
neutral tags under `machine_9_other/` (never judged): the load average, CPU
time spent by other processes, time stolen by the hypervisor, and the bytes
still dirty or under writeback when it started. The console reads them back
to say why a result is unstable (views `_stability.py`).
"""

from __future__ import annotations

import dataclasses
import gc
import os
import time
from typing import Any

import psutil

from ckptbench.api import MetricEntry

NOISE_OP = "machine"
_MIB = 2**20
_starting = False  # set by pause_while_starting: what lives when the first run starts is start-up only


def pause_while_starting() -> None:
  """Pauses the cyclic collector until the first run, for a process that does nothing else first.

  The first run freezes what start-up made without collecting it: its few
  thousand objects of garbage (import-time cycles) stay, where a full
  collection would walk every module loaded. Not for a caller with objects of
  its own: a previous suite's data in a cycle would be kept through the runs.
  """
  global _starting
  gc.disable()
  _starting = True


@dataclasses.dataclass(frozen=True)
class _Sample:
  wall: float
  busy: float  # CPU seconds of every process on the machine (psutil: all but idle and iowait)
  steal: float
  own: float  # this process's CPU seconds, children included


def _sample() -> _Sample:
  cpu = psutil.cpu_times()
  busy = cpu.user + cpu.system + getattr(cpu, "nice", 0.0) + getattr(cpu, "irq", 0.0) + getattr(cpu, "softirq", 0.0)
  own = psutil.Process().cpu_times()
  return _Sample(time.perf_counter(), busy, getattr(cpu, "steal", 0.0),
                 own.user + own.system + own.children_user + own.children_system)  # fmt: skip


def _meminfo_mib(*fields: str) -> dict[str, float]:
  """Fields of /proc/meminfo in MiB (absent on other systems: empty)."""
  found: dict[str, float] = {}
  try:
    with open("/proc/meminfo", encoding="ascii") as f:
      for line in f:
        name, _, rest = line.partition(":")
        if name in fields:
          found[name] = int(rest.split()[0]) * 1024 / _MIB
  except OSError:
    return {}
  return found


class NoiseMeter:
  """Flushes before a run (`start`) and says how busy the machine was during it (`stop`)."""

  def __init__(self, flush: bool = True):
    self._flush = flush
    self._start: _Sample | None = None
    self._tags: dict[str, Any] = {}
    self._freezes = False  # whether we froze the collected objects (not where someone else froze them first)
    self._enables = False  # whether we enabled the collector (the caller had paused it)

  def start(self) -> None:
    tags: dict[str, Any] = {}
    global _starting
    collect = True
    if self._start is None:
      self._freezes = gc.get_freeze_count() == 0
      self._enables = not gc.isenabled()
      collect = not (_starting and self._freezes)  # after start-up alone: nothing worth a walk of every module
      _starting = False
    if collect:
      gc.collect()
    if self._freezes:
      gc.freeze()
    if self._enables:
      gc.enable()
    if self._flush:
      t0 = time.perf_counter()
      os.sync()  # waits for writeback on Linux: the previous runs' pages are on disk before timing starts
      tags["flush_wait"] = (time.perf_counter() - t0, "wall-seconds")
    pending = _meminfo_mib("Dirty", "Writeback")
    if pending:
      tags["dirty_mib"] = (pending.get("Dirty", 0.0), "MiB")
      tags["writeback_mib"] = (pending.get("Writeback", 0.0), "MiB")
    self._tags = tags
    self._start = _sample()

  def stop(self) -> dict[str, MetricEntry]:
    """The run's noise tags, as a record's metrics hold them."""
    if self._start is None:
      return {}
    end, start = _sample(), self._start
    wall = max(end.wall - start.wall, 1e-9)
    other = max(0.0, (end.busy - start.busy) - (end.own - start.own))
    tags = dict(self._tags)
    tags["load_1m"] = (os.getloadavg()[0], "load")
    tags["cpus"] = (psutil.cpu_count() or 1, "cpus")
    tags["other_cpu_share"] = (other / wall, "cpus busy")  # 1.0: one whole CPU used by others throughout
    tags["steal_share"] = (max(0.0, end.steal - start.steal) / wall, "cpus stolen")
    return {f"{NOISE_OP}_9_other/{k}": MetricEntry(float(v), u) for k, (v, u) in tags.items()}

  def close(self) -> None:
    """Once the suite's runs are done: what `start` froze is collectable again, the collector as found."""
    if self._freezes:
      gc.unfreeze()
      self._freezes = False
    if self._enables:
      gc.disable()
      self._enables = False
