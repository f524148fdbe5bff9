"""`ckptbench emulate KIND`: a local object-store emulator (one per store that has one), and the
environment to use it."""

from __future__ import annotations

import argparse
import signal
import sys

from ckptbench.storage import shell_exports, start_emulator, stop_emulator


def register(subparsers) -> None:
  p = subparsers.add_parser(
      "emulate", help="start a local object-store emulator on 127.0.0.1",
      description="Start an object-store emulator on 127.0.0.1 with a bucket, print the environment"
      " variables a suite needs (eval-able), and serve until Ctrl-C.",
  )  # fmt: skip
  # No argparse choices: they would load every store (installed plugins too) to print any help.
  p.add_argument("kind", help="which store's emulator to start (an unknown name lists them)")
  p.add_argument("--port", type=int, help="port to listen on (default: a free one)")
  p.add_argument("--bucket", default="ckptbench", help="bucket to create (default: ckptbench)")
  p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
  emulator, proc = start_emulator(args.kind, port=args.port, bucket=args.bucket)
  try:
    print(shell_exports(emulator.env), flush=True)
    print(f"# {args.kind} emulator on {emulator.endpoint} (pid {emulator.pid}), bucket {emulator.url};"
          f" try: ckptbench run SUITE -o out --checkpoint_root {emulator.url}/runs", flush=True)  # fmt: skip
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    proc.wait()
  except KeyboardInterrupt:
    pass
  finally:
    stop_emulator(proc)
  return 0
