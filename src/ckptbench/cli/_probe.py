"""`ckptbench probe [DIR]`: measure the storage behind DIR and the host memory copy."""

from __future__ import annotations

import argparse

from ckptbench.cli._units import size_in


def register(subparsers) -> None:
  p = subparsers.add_parser(
      "probe", help="measure the storage and memory limits (the roofline)",
      description="Measure sequential write (with fsync), cold and warm read of the storage"
      " behind DIR, and host memcpy bandwidth. Results are cached per host and filesystem.",
  )  # fmt: skip
  p.add_argument("directory", nargs="?", default=".", help="a directory on the storage to probe (default: .)")
  p.add_argument("--size", "--size_mib", dest="size_bytes", type=size_in("MiB"), default=256 << 20,
                 help="written and read per measurement, e.g. 512MiB or 1GiB (default 256MiB)")  # fmt: skip
  p.add_argument("--refresh", action="store_true", help="measure again even when cached")
  p.add_argument("--no_cache", dest="cache", action="store_false", help="neither read nor write the cache")
  p.add_argument("--json", action="store_true", help="print the result as JSON")
  p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
  import dataclasses  # noqa: PLC0415
  import json  # noqa: PLC0415

  from rich.table import Table  # noqa: PLC0415

  from ckptbench.errors import CkptbenchError  # noqa: PLC0415
  from ckptbench.metrics import probe_storage  # noqa: PLC0415
  from ckptbench.views import make_console  # noqa: PLC0415

  if args.size_bytes < 1 << 20:
    raise CkptbenchError(f"--size {args.size_bytes:g} bytes: give 1MiB or more")
  probe = probe_storage(args.directory, size_mib=int(args.size_bytes) >> 20, cache=args.cache, refresh=args.refresh)
  if args.json:
    print(json.dumps(dataclasses.asdict(probe), indent=1, sort_keys=True))
    return 0
  console = make_console()
  console.print(
      f"[bold]{probe.mount}[/] ({probe.fstype or '?'} on {probe.device or '?'}),"
      f" {probe.size_bytes >> 20} MiB, measured {probe.measured_at} on {probe.host},"
      f" median of {probe.repeats} probes", highlight=False)
  table = Table("limit", "GiB/s", "spread", "how")
  cold = "n/a" if probe.disk_read_gbps is None else f"{probe.disk_read_gbps:.2f}"

  def spread(name: str) -> str:
    return f"{probe.spread[name]:.0%}" if name in probe.spread else "-"

  table.add_row("disk write", f"{probe.disk_write_gbps:.2f}", spread("disk_write"), "sequential, fsync included")
  table.add_row("disk read (cold)", cold, spread("disk_read"), f"after eviction by {probe.cold_method}")
  table.add_row("page-cache read (warm)", f"{probe.page_cache_read_gbps:.2f}", spread("page_cache_read"),
                "same file, cached")  # fmt: skip
  table.add_row("memcpy", f"{probe.memcpy_gbps:.2f}", spread("memcpy"), "numpy copy, one thread")
  console.print(table)
  if not probe.steady():
    console.print("[yellow]unsteady:[/yellow] a spread above 30% (a busy machine?); runs use it for an hour, then"
                  " measure again")
  return 0
