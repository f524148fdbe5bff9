"""Runs gcp-storage-emulator with four fidelity fixes, so clients see GCS-like behaviour.

`python -m ckptbench.storage._gcs_emulator start --host=... --port=...` is the
emulator's own command line. The fixes (measured with TensorStore 0.1.86):
- GCS answers every object download with `x-goog-generation`; the emulator
  omits it, and TensorStore's OCDBT reads then fail at random with
  "Malformed StorageGeneration".
- GCS answers `Expect: 100-continue`; the emulator (HTTP/1.0) does not, so
  curl waits 1 s before sending every body over 1 MiB.
- The emulator listens with a backlog of 5 connections; 16 uploads in flight
  then lose SYNs and wait 1 s for the retransmission. The backlog here is 128.
- GCS moves an object with `POST .../o/SRC/moveTo/o/DST`; the emulator answers
  501, and gcsfs (PyTorch DCP's rename of .metadata) retried it for 35 s
  before falling back to copy and delete. Here it copies, then deletes.
The emulator still serves one request at a time (its own limit, which the
store roofline shows).
"""

from __future__ import annotations

import http.server
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
http.server.HTTPServer.request_queue_size = 128

from gcp_storage_emulator import server  # noqa: E402  (after the download handler is replaced)

_parse_request = server.RequestHandler.parse_request


def _parse_request_answering_expect(self) -> bool:
  ok = _parse_request(self)
  if ok and self.headers.get("Expect", "").lower() == "100-continue":
    self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    self.wfile.flush()
  return ok


server.RequestHandler.parse_request = _parse_request_answering_expect


def _move(request, response, storage, *args, **kwargs):
  bucket, source = request.params["bucket_name"], request.params["object_id"]
  request.params["dest_bucket_name"] = bucket
  objects.copy(request, response, storage)
  if response.status == 200:
    storage.delete_file(bucket, source)


server.HANDLERS = (
    (r"^/storage/v1/b/(?P<bucket_name>[-.\w]+)/o/(?P<object_id>.*[^/]+)/moveTo/o/(?P<dest_object_id>.*[^/]+)$",
     {"POST": _move}),
    *server.HANDLERS,
)  # fmt: skip

if __name__ == "__main__":
  from gcp_storage_emulator.__main__ import main

  sys.exit(main(sys.argv[1:]))
