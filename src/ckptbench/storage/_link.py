"""A shaped link: a local HTTP proxy between ckptbench and a store that adds latency, caps
bandwidth and injects throttling and server errors.

On a laptop an emulator answers in microseconds over loopback; a cloud bucket
answers in tens of milliseconds over a shared pipe and sometimes says 429 or
503. The link makes the first behave like the second, so OCDBT (few large
objects) and many small files rank as they would in the cloud, and the cost of
retries shows. Clients retry injected errors as they would real ones; a save
under errors must complete and verify, or fail with a clear message.

Run it as `python -m ckptbench.storage._link --upstream URL --port P --shape SPEC`
(`start_link` does). GET /__ckptbench_link__/stats returns its counters; with `?since=SEQ` also
what the requests after the SEQ-th did (`RequestLog.since`), and with `&windows=T0:T1,...` what
those that started inside the wall-clock windows did.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import dataclasses
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import urllib.request
from typing import Sequence

from ckptbench.errors import CkptbenchError
from ckptbench.storage._emulator import free_port, stop_emulator
from ckptbench.storage._registry import store_for
from ckptbench.storage._url import StoreURL

STATS_PATH = "/__ckptbench_link__/stats"
# Set while a run's link is up: where its counters are, for the per-block request collector.
STATS_URL_ENV = "CKPTBENCH_LINK_STATS_URL"
_PR_SET_PDEATHSIG = 1
# How long the link may take to answer after it starts; many processes starting at once on a
# few cores (`ckptbench scale`) need longer than one does.
START_TIMEOUT_ENV = "CKPTBENCH_LINK_START_S"
_UNITS = {"b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
               "proxy-authorization", "proxy-authenticate", "host", "content-length", "expect"}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class LinkShape:
  """How the link behaves.

  Attributes:
    rtt_s: round-trip time added to every request (half before forwarding, half after).
    bandwidth_bps: bytes per second each way, shared by all connections (None: uncapped).
    error_rate: share of requests answered with an injected error instead of being forwarded.
    error_codes: the statuses injected, chosen at random (429 throttling, 503 unavailable).
  """

  rtt_s: float = 0.0
  bandwidth_bps: float | None = None
  error_rate: float = 0.0
  error_codes: tuple[int, ...] = (429, 503)

  def describe(self) -> str:
    bw = "unlimited" if self.bandwidth_bps is None else f"{self.bandwidth_bps / 1e9:g}GB/s"
    return f"rtt={self.rtt_s * 1e3:g}ms,bw={bw},errors={self.error_rate * 100:g}%"


def parse_link(spec: str) -> LinkShape:
  """Parses "rtt=20ms,bw=1GB/s,errors=1%" (any subset; bw units B, KB, MB, GB, KiB, MiB, GiB per s).

  Raises:
    CkptbenchError: naming the part that cannot be read.
  """
  fields: dict = {}
  for part in filter(None, (p.strip() for p in spec.split(","))):
    key, sep, value = part.partition("=")
    value = value.strip().lower()
    try:
      if not sep:
        raise ValueError
      if key == "rtt":
        m = re.fullmatch(r"([0-9.]+)\s*(ms|s|us)?", value)
        scale = {"ms": 1e-3, "s": 1.0, "us": 1e-6}[m.group(2) or "ms"]
        fields["rtt_s"] = float(m.group(1)) * scale
      elif key == "bw":
        m = re.fullmatch(r"([0-9.]+)\s*([kmg]i?b|b)(/s|ps)?", value)
        fields["bandwidth_bps"] = float(m.group(1)) * _UNITS[m.group(2)]
      elif key == "errors":
        rate = float(value.rstrip("%")) / (100 if value.endswith("%") else 1)
        if not 0 <= rate < 1:
          raise ValueError
        fields["error_rate"] = rate
      else:
        raise ValueError
    except (ValueError, AttributeError, TypeError, KeyError):
      raise CkptbenchError(
          f"--link {spec!r}: cannot read {part!r}; write e.g. rtt=20ms,bw=1GB/s,errors=1%"
      ) from None
  return LinkShape(**fields)


class _Pacer:
  """A shared pipe of `bps` bytes per second: each transfer waits for its turn on it."""

  def __init__(self, bps: float | None):
    self._bps = bps
    self._free_at = 0.0

  async def send(self, nbytes: int) -> None:
    if not self._bps or not nbytes:
      return
    now = time.monotonic()
    self._free_at = max(self._free_at, now) + nbytes / self._bps
    await asyncio.sleep(self._free_at - now)


def _kind(method: str, query: str) -> str:
  if method in ("PUT", "POST", "PATCH"):
    return "put"
  if method == "DELETE":
    return "delete"
  if method == "GET" and ("list-type=" in query or "prefix=" in query) and "alt=media" not in query:
    return "list"
  return "get"  # GET and HEAD (metadata reads are billed as class B operations too)


# Query parameters that do not change what a read reads: TensorStore's cache-busting token and
# the generation conditions of a revalidating read. A read that differs only in these (or in its
# byte range) reads the same object again.
_VOLATILE_PARAMS = ("tensorstore=", "ifGenerationNotMatch=", "ifGenerationMatch=", "ifMetagenerationMatch=")
_KINDS = ("put", "get", "list", "delete")


def request_target(method: str, path: str, query: str) -> str:
  """What a request reads or writes: its method, path and query without the volatile parameters.

  Example:
    >>> request_target("GET", "/b/o/x", "alt=media&tensorstore=9f2c&ifGenerationNotMatch=3")
    'GET /b/o/x?alt=media'
  """
  kept = "&".join(p for p in query.split("&") if p and not p.startswith(_VOLATILE_PARAMS))
  return f"{method} {path}?{kept}" if kept else f"{method} {path}"


class RequestLog:
  """Every forwarded request: when it started and ended, its kind and its target.

  `since(seq)` answers, for the requests after the first `seq`: how many targets of each kind
  were distinct (a target read again, polled, revalidated or read in another byte range counts
  once) and the seconds the requests took (upstream round trips, summed); `windows` also gives
  the counts (by kind, and distinct targets of any kind) and seconds of the requests that started
  inside given wall-clock windows.
  """

  def __init__(self):
    self._entries: list[list] = []  # [start, end or None, kind, target hash]

  def __len__(self) -> int:
    return len(self._entries)

  def begin(self, kind: str, target: str) -> list:
    entry = [time.time(), None, kind, hash(target)]
    self._entries.append(entry)
    return entry

  @staticmethod
  def end(entry: list) -> None:
    entry[1] = time.time()

  def since(self, seq: int, windows: Sequence[tuple[float, float]] = ()) -> dict:
    entries = self._entries[seq:]
    out: dict = {"distinct": {k: len({e[3] for e in entries if e[2] == k}) for k in _KINDS},
                 "request_s": {k: sum(e[1] - e[0] for e in entries if e[2] == k and e[1]) for k in _KINDS}}
    if windows:
      inside = [e for e in entries if any(t0 <= e[0] <= t1 for t0, t1 in windows)]
      out["in_windows"] = {k: sum(e[2] == k for e in inside) for k in _KINDS}
      out["in_windows_distinct"] = len({e[3] for e in inside})
      out["in_windows_request_s"] = sum(e[1] - e[0] for e in inside if e[1])
    return out


def _stats_answer(stats: dict, log: RequestLog, query) -> dict:
  """The counters, `seq`, and with `since` (and `windows`) what those requests did."""
  if "since" not in query:
    return {**stats, "seq": len(log)}
  windows = [tuple(float(t) for t in w.split(":")) for w in query.get("windows", "").split(",") if w]
  return {**stats, "seq": len(log), **log.since(int(query["since"]), windows)}  # type: ignore[arg-type]


def build_app(upstream: str, shape: LinkShape, seed: int = 0):
  """The aiohttp application forwarding to `upstream` through `shape`."""
  from aiohttp import ClientSession, ClientTimeout, web  # noqa: PLC0415  (storage extra)

  rng = random.Random(seed)
  up, down = _Pacer(shape.bandwidth_bps), _Pacer(shape.bandwidth_bps)
  stats = {"requests": 0, "injected_errors": 0, "bytes_up": 0, "bytes_down": 0,
           "put": 0, "get": 0, "list": 0, "delete": 0}  # fmt: skip
  session: dict = {}
  log = RequestLog()

  async def forward(request: web.Request) -> web.StreamResponse:
    if request.path == STATS_PATH:
      return web.json_response(_stats_answer(stats, log, request.query))
    body = await request.read()
    stats["requests"] += 1
    await asyncio.sleep(shape.rtt_s / 2)
    await up.send(len(body))
    stats["bytes_up"] += len(body)
    if shape.error_rate and rng.random() < shape.error_rate:
      stats["injected_errors"] += 1
      await asyncio.sleep(shape.rtt_s / 2)
      code = rng.choice(shape.error_codes)
      return web.json_response({"error": {"code": code, "message": "injected by ckptbench --link"}},
                               status=code, headers={"Retry-After": "0"})  # fmt: skip
    kind = _kind(request.method, request.query_string)
    stats[kind] += 1
    entry = log.begin(kind, request_target(request.method, request.path, request.query_string))
    headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
    async with session["client"].request(
        request.method, upstream + request.rel_url.raw_path_qs, headers=headers, data=body,
        allow_redirects=False,
    ) as answer:  # fmt: skip
      payload = await answer.read()
      out_headers = {k: v for k, v in answer.headers.items() if k.lower() not in _HOP_BY_HOP}
      if "Location" in out_headers:  # resumable uploads name the server: keep them on the link
        out_headers["Location"] = out_headers["Location"].replace(upstream, str(request.url.origin()))
      status = answer.status
    log.end(entry)
    await down.send(len(payload))
    stats["bytes_down"] += len(payload)
    await asyncio.sleep(shape.rtt_s / 2)
    if request.method == "HEAD":  # the object's length, not the (empty) body's
      response = web.StreamResponse(status=status, headers=out_headers)
      response.content_length = int(answer.headers.get("Content-Length", 0))
      await response.prepare(request)
      return response
    return web.Response(body=payload, status=status, headers=out_headers)

  async def start(app):
    session["client"] = ClientSession(timeout=ClientTimeout(total=300), auto_decompress=False)

  async def stop(app):
    await session["client"].close()

  app = web.Application(client_max_size=1 << 34)
  app.on_startup.append(start)
  app.on_cleanup.append(stop)
  app.router.add_route("*", "/{tail:.*}", forward)
  return app


@dataclasses.dataclass(frozen=True)
class Link:
  """A running link: its address, what it forwards to, its shape and process id."""

  endpoint: str
  upstream: str
  shape: LinkShape
  pid: int

  def stats(self, since: int | None = None) -> dict:
    """The link's counters: requests, injected errors, bytes each way, put/get/list/delete, and
    `seq` (requests so far); with `since`, also what the requests after the `since`-th did
    (`RequestLog.since`)."""
    query = "" if since is None else f"?since={since}"
    with urllib.request.urlopen(self.endpoint + STATS_PATH + query, timeout=5) as answer:
      return json.loads(answer.read())


def link_env(scheme: str, endpoint: str) -> dict[str, str]:
  """The variables that send clients of `scheme`'s store through the link."""
  return store_for(scheme).link_env(endpoint)


def link_upstream(url: StoreURL) -> str:
  """The endpoint a link to `url`'s store forwards to: the one set in the environment.

  Raises:
    CkptbenchError: naming the variable to set (`ckptbench emulate` prints it).
  """
  store = store_for(url)
  upstream = store.endpoint()
  if not upstream:
    where = f"in {store.endpoint_variable}" if store.endpoint_variable else f"({url.scheme}:// has none)"
    raise CkptbenchError(f"--link needs the endpoint of {url} {where} (`ckptbench emulate` prints it)")
  return upstream


def _die_with(parent_pid: int) -> None:
  """In the link's own process: Linux kills it when the process that started it dies (even by
  SIGKILL, as `launch` stops a stuck host), so no link outlives its run. Set here rather than
  between fork and exec, where the starting process (JAX running) must not run Python."""
  with contextlib.suppress(OSError, AttributeError):
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
  if os.getppid() != parent_pid:  # it died before the line above
    sys.exit(0)


def start_link(upstream: str, shape: LinkShape, *, seed: int = 0) -> tuple[Link, subprocess.Popen]:
  """Starts the link in a subprocess, forwarding to `upstream`; stop it with `stop_emulator`."""
  port = free_port()
  proc = subprocess.Popen(
      [sys.executable, "-m", "ckptbench.storage._link", "--upstream", upstream, "--port", str(port),
       "--shape", shape.describe().replace("bw=unlimited,", ""), "--seed", str(seed),
       "--parent_pid", str(os.getpid())],
      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
      start_new_session=True,
  )  # fmt: skip
  link = Link(f"http://127.0.0.1:{port}", upstream, shape, proc.pid)
  limit = float(os.environ.get(START_TIMEOUT_ENV, "30"))
  deadline = time.monotonic() + limit
  while time.monotonic() < deadline:
    if proc.poll() is not None:
      raise CkptbenchError(f"the shaped link to {upstream} exited at start (code {proc.returncode})")
    try:
      link.stats()
      return link, proc
    except OSError:
      time.sleep(0.1)
  stop_emulator(proc)
  raise CkptbenchError(f"the shaped link to {upstream} did not start within {limit:g} s ({START_TIMEOUT_ENV})")


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description="ckptbench's shaped link (a local HTTP proxy)")
  parser.add_argument("--upstream", required=True)
  parser.add_argument("--port", type=int, required=True)
  parser.add_argument("--shape", default="")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--parent_pid", type=int)
  args = parser.parse_args(argv)
  if args.parent_pid and sys.platform.startswith("linux"):
    _die_with(args.parent_pid)
  from aiohttp import web  # noqa: PLC0415

  web.run_app(build_app(args.upstream.rstrip("/"), parse_link(args.shape), args.seed),
              host="127.0.0.1", port=args.port, print=None, access_log=None)  # fmt: skip


if __name__ == "__main__":
  main()
