#!/usr/bin/env bash
# The accelerator path on one NVIDIA GPU in at most 8 minutes: per-block device memory,
# device<->host throughput against the probe, the quick start, the CUDA PyTorch generator and
# training interference with a device-resident model; prints one table (measurements/device_check.py).
# Usage: measurements/device_check.sh [--cpu]   (PYTHON=... picks the interpreter; default .venv/bin/python)
# It needs jax with CUDA (pip install 'jax[cuda12]') and, for the PyTorch row, a CUDA build of torch.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
if [[ " $* " != *" --cpu "* ]]; then
  if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "device_check: no NVIDIA GPU here (nvidia-smi finds none); --cpu checks the script's plumbing on CPU" >&2
    exit 2
  fi
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
fi
exec timeout 480 "$PYTHON" measurements/device_check.py "$@"
