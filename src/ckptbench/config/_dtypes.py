"""Dtype names of the suite schema -> numpy dtypes (ml_dtypes for bfloat16 and float8)."""

from __future__ import annotations

import ml_dtypes
import numpy as np


def numpy_dtype(name: str) -> np.dtype:
  if hasattr(ml_dtypes, name):
    return np.dtype(getattr(ml_dtypes, name))
  return np.dtype(name)
