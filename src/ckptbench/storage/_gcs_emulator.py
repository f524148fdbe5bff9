"""Runs gcp-storage-emulator with the generation headers real GCS sends on media downloads.

`python -m ckptbench.storage._gcs_emulator start --host=... --port=...` is the
emulator's own command line. One fidelity fix: GCS answers every object
download with `x-goog-generation` (and `x-goog-metageneration`); the emulator
omits them, and TensorStore's gcs driver then fails OCDBT reads at random with
"Malformed StorageGeneration". Nothing else is changed.
"""

from __future__ import annotations

import sys

from gcp_storage_emulator.exceptions import NotFound
from gcp_storage_emulator.handlers import objects

_download = objects.download


def _download_with_generation(request, response, storage, *args, **kwargs):
  try:
    obj = storage.get_file_obj(request.params["bucket_name"], request.params["object_id"])
    response["x-goog-generation"] = str(obj["generation"])
    response["x-goog-metageneration"] = str(obj["metageneration"])
  except NotFound:
    pass  # the download itself answers 404
  return _download(request, response, storage, *args, **kwargs)


objects.download = _download_with_generation  # before the server module builds its routes

if __name__ == "__main__":
  from gcp_storage_emulator.__main__ import main

  sys.exit(main(sys.argv[1:]))
