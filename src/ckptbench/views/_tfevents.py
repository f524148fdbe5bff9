"""TensorBoard event files and the summaries in them, from TensorBoard's protos alone.

TensorBoard's own writer (`EventFileWriter`) and summary helpers (the HParams and
text plugins' `summary_v2`) import its TensorFlow stub, which imports numpy and,
where it is installed, boto3 (about 0.3 s of CPU), and the writer checksums
each record in pure Python on a thread of its own. These write the same
records: the TFRecord framing (length, masked CRC-32C of the length, data,
masked CRC-32C of the data) with the first event naming the file version, and
summaries equal to what the plugins' `hparams_pb`, `hparams_config_pb` and
`text_pb` return (tests/views/test_views_tensorboard.py compares them).
"""

from __future__ import annotations

import itertools
import os
import pathlib
import socket
import struct
import time
from typing import Any, Iterable

from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
from tensorboard.plugins.hparams import api_pb2
from tensorboard.plugins.hparams import plugin_data_pb2 as hparams_plugin_data
from tensorboard.plugins.text import plugin_data_pb2 as text_plugin_data

_FILE_VERSION = "brain.Event:2"
_MASK_DELTA = 0xA282EAD8
_EXPERIMENT_TAG = "_hparams_/experiment"
_SESSION_START_TAG = "_hparams_/session_start_info"
_NULL_TENSOR = tensor_pb2.TensorProto(
    dtype=types_pb2.DT_FLOAT, tensor_shape=tensor_shape_pb2.TensorShapeProto(dim=[{"size": 0}])
)
_files = itertools.count()  # a per-process serial in file names, as TensorBoard's writer has


def _crc_table() -> list[int]:
  table = []
  for byte in range(256):
    crc = byte
    for _ in range(8):
      crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1  # the Castagnoli polynomial, reflected
    table.append(crc)
  return table


_TABLE = _crc_table()


def _crc32c_python(data: bytes) -> int:
  crc, table = 0xFFFFFFFF, _TABLE
  for byte in data:
    crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
  return crc ^ 0xFFFFFFFF


try:  # the C implementation where installed (google-cloud-storage brings it): the same number
  from google_crc32c import value as _crc32c  # pyright: ignore[reportMissingImports]
except ImportError:  # pragma: no cover  (depends on the environment)
  _crc32c = _crc32c_python


def masked_crc32c(data: bytes) -> int:
  """TFRecord's checksum: CRC-32C, rotated right by 15 bits, plus a constant."""
  crc = _crc32c(data)
  return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def record(data: bytes) -> bytes:
  """One TFRecord: the framing TensorBoard's reader checks around `data`."""
  header = struct.pack("<Q", len(data))
  return header + struct.pack("<I", masked_crc32c(header)) + data + struct.pack("<I", masked_crc32c(data))


class EventFile:
  """Events of one TensorBoard run directory, written to one file when closed."""

  def __init__(self, run_dir: pathlib.Path, suffix: str = ""):
    run_dir.mkdir(parents=True, exist_ok=True)
    now = time.time()
    name = f"events.out.tfevents.{int(now):010d}.{socket.gethostname()}.{os.getpid()}.{next(_files)}{suffix}"
    self.path = run_dir / name
    self._records = [record(event_pb2.Event(wall_time=now, file_version=_FILE_VERSION).SerializeToString())]

  def add(self, event: event_pb2.Event) -> None:
    self._records.append(record(event.SerializeToString()))

  def flush(self) -> None:
    """Writes every event added so far (the whole file again: one write, never a torn record)."""
    self.path.write_bytes(b"".join(self._records))

  def close(self) -> None:
    self.flush()


def text_summary(tag: str, markdown: str) -> summary_pb2.Summary:
  """A text card, as the text plugin's `text_pb(tag, markdown)` makes it."""
  content = text_plugin_data.TextPluginData(version=0).SerializeToString()
  metadata = summary_pb2.SummaryMetadata(
      plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text", content=content)
  )
  tensor = tensor_pb2.TensorProto(
      dtype=types_pb2.DT_STRING, tensor_shape=tensor_shape_pb2.TensorShapeProto(), string_val=[markdown.encode()]
  )
  return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, metadata=metadata, tensor=tensor)])


def _hparams_summary(tag: str, data: hparams_plugin_data.HParamsPluginData) -> summary_pb2.Summary:
  data.version = 0
  metadata = summary_pb2.SummaryMetadata(
      plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="hparams", content=data.SerializeToString())
  )
  return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, metadata=metadata, tensor=_NULL_TENSOR)])


def session_summary(hparams: dict[str, bool | float | str], trial_id: str, start_time_secs: float | None = None):
  """One trial's HParams values, as the plugin's `hparams_pb(hparams, trial_id)` makes them."""
  start = hparams_plugin_data.SessionStartInfo(
      group_name=trial_id, start_time_secs=time.time() if start_time_secs is None else start_time_secs
  )
  for name in sorted(hparams):
    value = hparams[name]
    if isinstance(value, bool):
      start.hparams[name].bool_value = value
    elif isinstance(value, (int, float)):
      start.hparams[name].number_value = value
    elif isinstance(value, str):
      start.hparams[name].string_value = value
    else:
      raise TypeError(f"hparams[{name!r}] = {value!r}, of unsupported type {type(value)!r}")
  return _hparams_summary(_SESSION_START_TAG, hparams_plugin_data.HParamsPluginData(session_start_info=start))


_DATA_TYPES = {int: api_pb2.DATA_TYPE_FLOAT64, float: api_pb2.DATA_TYPE_FLOAT64, bool: api_pb2.DATA_TYPE_BOOL,
               str: api_pb2.DATA_TYPE_STRING}  # fmt: skip


def experiment_summary(
    domains: Iterable[tuple[str, list[Any] | None]], metrics: Iterable[tuple[str, str]], time_created_secs=None
) -> summary_pb2.Summary:
  """The experiment: each HParam with its discrete values (None: no domain) and each metric (tag, display
  name), as the plugin's `hparams_config_pb([HParam(name, Discrete(values))], [Metric(tag, display_name=)])`."""
  infos = []
  for name, values in domains:
    info = api_pb2.HParamInfo(name=name)
    if values is not None:
      info.type = _DATA_TYPES[type(values[0])]
      info.domain_discrete.extend(sorted(values))
    infos.append(info)
  metric_infos = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=tag), display_name=shown) for tag, shown in metrics]
  experiment = api_pb2.Experiment(hparam_infos=infos, metric_infos=metric_infos, time_created_secs=time_created_secs)
  return _hparams_summary(_EXPERIMENT_TAG, hparams_plugin_data.HParamsPluginData(experiment=experiment))
