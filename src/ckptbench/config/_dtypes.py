"""Dtype names of the suite schema -> bytes per element, and -> numpy dtypes (ml_dtypes for bfloat16 and float8).

Sizes come from a table, so `ckptbench plan` and the memory and disk checks
size a suite without importing numpy and ml_dtypes (a fifth of a second);
building the data asks `numpy_dtype`. A test holds the table to numpy's itemsize.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
  import numpy as np

# Every dtype the suite schema accepts (config/_spec.py lists these names), with its bytes per element.
ITEMSIZES: dict[str, int] = {
    "bool": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "uint8": 1, "uint16": 2, "uint32": 4,
    "uint64": 8, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "float8_e4m3fn": 1,
    "float8_e5m2": 1, "complex64": 8,
}  # fmt: skip


def numpy_dtype(name: str) -> np.dtype:
  import ml_dtypes  # noqa: PLC0415  (numpy with it: only the data builders need them)
  import numpy as np  # noqa: PLC0415

  if hasattr(ml_dtypes, name):
    return np.dtype(getattr(ml_dtypes, name))
  return np.dtype(name)


def dtype_itemsize(name: str) -> int:
  """Bytes per element of the dtype `name`: from the table, else numpy's answer."""
  size = ITEMSIZES.get(name)
  return size if size is not None else numpy_dtype(name).itemsize
