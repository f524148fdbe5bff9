"""`ckptbench plan CONFIG`: what a run would do, without running anything."""

from __future__ import annotations

import argparse

from ckptbench._escape import terminal_text
from ckptbench.cli._run import add_selection_argument, add_suite_arguments, config_path


def register(subparsers) -> None:
  p = subparsers.add_parser(
      "plan", help="show the expanded benchmarks", description="Expand a suite without running it."
  )
  add_suite_arguments(p)
  add_selection_argument(p)
  p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
  from rich.table import Table  # noqa: PLC0415

  from ckptbench.config import load_suite  # noqa: PLC0415
  from ckptbench.engine import describe_plan, format_bytes  # noqa: PLC0415
  from ckptbench.views import make_console, markup_text  # noqa: PLC0415

  config_file = config_path(args)
  suite = load_suite(config_file, args.overrides, check_paths=False)
  device_count = args.devices or suite.devices_needed
  view = describe_plan(suite, device_count, args.select)
  console = make_console()
  console.print(f"[bold]{markup_text(suite.name)}[/]: {view['runs']} runs on {device_count or 'any number of'} devices")
  table = Table("key", "mesh", "checkpoint", "size", "per device", "benchmark")
  for row in view["benchmarks"]:
    cells = (row["key"], row["mesh"], row["checkpoint"], row["size"], row["per_device"], row["name"])
    table.add_row(*map(markup_text, cells))  # the user's names, printed as written
  console.print(table)
  for preset in view["presets"]:
    console.print(
        f"preset {preset['name']} at scale {preset['scale']:g}: {preset['param_count']:,} parameters"
        f" in {preset['num_tensors']} tensors, {format_bytes(preset['param_bytes'])} of parameters"
        f" + {format_bytes(preset['optimizer_bytes'])} of optimizer state"
        f" = {format_bytes(preset['total_bytes'])}",
        markup=False,
        soft_wrap=True,
    )
  for line in view["answers"]:
    console.print(terminal_text(line), markup=False, soft_wrap=True)
  console.print(f"disk: checkpoints need {view['disk'].describe()}", markup=False, soft_wrap=True)
  if view["memory_pass"]:
    console.print(view["memory_pass"], markup=False, soft_wrap=True)
  for note in view["notes"]:
    console.print(terminal_text(f"note: {note}"), markup=False, soft_wrap=True)
  for mesh, reason in view["skipped_meshes"]:
    console.print(terminal_text(f"skipped mesh {mesh}: {reason}"), markup=False, soft_wrap=True)
  for generator, options, reason in view["invalid"]:
    console.print(terminal_text(f"invalid combination {generator}{options}: {reason}"), markup=False, soft_wrap=True)
  for generator, options, reason in view["unsupported"]:
    console.print(terminal_text(f"unsupported here {generator}{options}: {reason}"), markup=False, soft_wrap=True)
  return 0
