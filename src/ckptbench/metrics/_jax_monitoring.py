"""The `jax_monitoring` collector: Orbax stage timings, bytes and JAX compile events.

One set of listeners is registered with `jax.monitoring` for the life of the
process; entering a block only adds the collector to the tuple of active ones,
so start/stop cost a few microseconds and outside any block an event costs one
empty-tuple check.

Which block gets an event: every block that is open when the event is emitted,
whichever thread emits it. Nested blocks therefore both see the inner block's
events, and the background commit of an async save is counted by the blocks
open while it runs (a `save` block around `save_async()` records the blocking
part; a block around `.result()` or `wait_until_finished()` records the rest).
Events emitted while no block is open are not kept. The collector never imports
JAX: while JAX is not loaded there is nothing to listen to and it records nothing.
"""

from __future__ import annotations

import math
import sys
import threading
from typing import Any

from ckptbench.metrics import _jax_events as ev
from ckptbench.api import TAGS, tag_value
from ckptbench.api import MetricValue, register_collector

_lock = threading.Lock()
# Copy-on-write: listeners read it without locking; start/stop replace it.
_active: tuple["JaxMonitoringCollector", ...] = ()
_registered = False


def _on_event(event: str, **_: Any) -> None:
  if _active and event.startswith(ev.WATCHED_PREFIXES):
    for c in _active:
      c._records.append(("event", event, 1.0))


def _on_duration(event: str, duration: float, **_: Any) -> None:
  if _active and event.startswith(ev.WATCHED_PREFIXES):
    for c in _active:
      c._records.append(("duration", event, duration))


def _on_scalar(event: str, value: float, **_: Any) -> None:
  if _active and event.startswith(ev.WATCHED_PREFIXES):
    for c in _active:
      c._records.append(("scalar", event, value))


def _ensure_listeners() -> bool:
  """Registers the listeners once, and again for a kind someone cleared.

  Returns:
    False when JAX is not loaded (then there is nothing to listen to).
  """
  global _registered
  monitoring = sys.modules.get("jax.monitoring")
  if monitoring is None:
    return False
  # jax.monitoring has no public getter; its private module does (jax 0.4.3x-0.10).
  private = sys.modules.get("jax._src.monitoring")
  kinds = (
      (_on_event, monitoring.register_event_listener, "get_event_listeners"),
      (_on_duration, monitoring.register_event_duration_secs_listener, "get_event_duration_listeners"),
      (_on_scalar, monitoring.register_scalar_listener, "get_scalar_listeners"),
  )
  for listener, register, getter in kinds:
    current = getattr(private, getter, None)
    if not _registered or (current is not None and listener not in current()):
      register(listener)
  _registered = True
  return True


class JaxMonitoringCollector:
  """Orbax save/load stage timings, bytes and bandwidths, and JAX compile events (jax.monitoring)."""

  def __init__(self):
    self._records: list[tuple[str, str, float]] = []

  def start(self) -> None:
    global _active
    with _lock:
      if _ensure_listeners():
        _active = _active + (self,)

  def stop(self) -> dict[str, MetricValue]:
    global _active
    with _lock:
      _active = tuple(c for c in _active if c is not self)
    return summarize(list(self._records))  # a copy: a late event from another thread may still land


def summarize(records: list[tuple[str, str, float]]) -> dict[str, MetricValue]:
  """Turns `(kind, event name, value)` records, in emission order, into tag values."""
  sums: dict[str, float] = {}
  lasts: dict[str, float] = {}
  other: dict[str, MetricValue] = {}
  # Per pair group: unmatched rates and byte amounts, and the running byte sum.
  rates: dict[str, list[float]] = {}
  amounts: dict[str, list[float]] = {}
  running: dict[str, float] = {}

  def add(tag: str, x: float) -> None:
    if TAGS[tag].reduce == "last":
      lasts[tag] = x
    else:
      sums[tag] = sums.get(tag, 0.0) + x

  def complete(group: str, gib: float, rate: float) -> None:
    if gib > 0 and rate > 0 and math.isfinite(rate):
      bytes_tag, seconds_tag = ev.PAIRS[group]
      add(bytes_tag, gib)
      add(seconds_tag, gib / rate)

  for kind, name, x in records:
    action = ev.EVENTS.get((kind, name))
    if isinstance(action, ev.Tag):
      add(action.tag, x)
    elif isinstance(action, ev.Pair):
      group = action.group
      if action.role == "rate":
        if action.group in running:
          complete(group, running.pop(group), x)
        elif amounts.get(group):
          complete(group, amounts[group].pop(0), x)
        else:
          rates.setdefault(group, []).append(x)
      else:
        if action.tag is not None:
          add(action.tag, x)
        if action.running:
          running[group] = running.get(group, 0.0) + x
        elif rates.get(group):
          complete(group, x, rates[group].pop(0))
        else:
          amounts.setdefault(group, []).append(x)
    elif action is None:
      tag = ev.other_tag(kind, name)
      if kind == "scalar":
        other[tag] = MetricValue(x, "value", "last")
      else:
        prev = other.get(tag)
        total = x + (prev.value if prev else 0.0)
        other[tag] = MetricValue(total, "s" if kind == "duration" else "count", "sum")
  out = {tag: tag_value(tag, x) for tag, x in sums.items()}
  out.update((tag, tag_value(tag, x)) for tag, x in lasts.items())
  out.update(other)
  return out


register_collector("jax_monitoring", JaxMonitoringCollector)
