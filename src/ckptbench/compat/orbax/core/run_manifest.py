"""Orbax's `core.run_manifest` on ckptbench: the code and machine a suite ran on.

`capture_run_manifest` gives ckptbench's `run_environment` (manifest.json's) Orbax's fields;
`git_dirty` counts tracked files only (as manifest.json does) and a package not installed reads "missing".
"""

from __future__ import annotations

import dataclasses
import datetime
import os

import jax

import ckptbench
from ckptbench import markdown_code
from ckptbench.compat.orbax.core import backends


@dataclasses.dataclass(frozen=True)
class RunManifest:
  """The code, environment and topology of a suite's run, captured once."""

  captured_at: str
  hostname: str
  git_sha: str
  git_dirty: bool
  jax_version: str
  orbax_version: str
  tensorstore_version: str
  jax_process_count: int
  jax_process_index: int
  jax_device_count: int
  jax_device_kind: str
  xla_flags: str
  libtpu_init_args: str
  backend: str = "unknown"

  def as_markdown(self) -> str:
    """Three markdown tables under "## Run manifest": Code, Environment, Topology (values escaped)."""
    sections = {
        "Code": [("git_sha", self.git_sha), ("git_dirty", self.git_dirty), ("jax_version", self.jax_version),
                 ("orbax_version", self.orbax_version), ("tensorstore_version", self.tensorstore_version)],
        "Environment": [("hostname", self.hostname), ("captured_at", self.captured_at),
                        ("XLA_FLAGS", self.xla_flags or "(unset)"),
                        ("LIBTPU_INIT_ARGS", self.libtpu_init_args or "(unset)")],
        "Topology": [("backend", self.backend), ("jax_process_count", self.jax_process_count),
                     ("jax_process_index", self.jax_process_index), ("jax_device_count", self.jax_device_count),
                     ("jax_device_kind", self.jax_device_kind)],
    }  # fmt: skip
    lines = ["## Run manifest", ""]
    for title, rows in sections.items():
      lines += [f"### {title}", "", "| field | value |", "|---|---|"]
      lines += [f"| {markdown_code(name)} | {markdown_code(value)} |" for name, value in rows]
      lines.append("")
    return "\n".join(lines)


def capture_run_manifest() -> RunManifest:
  """This process's `RunManifest`, from ckptbench's `run_environment`."""
  environment = ckptbench.run_environment()
  versions, git = environment["versions"], environment["git"]
  return RunManifest(
      captured_at=datetime.datetime.now(datetime.timezone.utc).isoformat(), hostname=environment["hostname"],
      git_sha=git["sha"] or "unknown", git_dirty=bool(git["dirty"]), jax_version=versions.get("jax") or "missing",
      orbax_version=versions.get("orbax-checkpoint") or "missing",
      tensorstore_version=versions.get("tensorstore") or "missing", jax_process_count=environment["process_count"],
      jax_process_index=jax.process_index(), jax_device_count=environment["device_count"],
      jax_device_kind=environment["device_kind"] or "unknown", xla_flags=environment["xla_flags"],
      libtpu_init_args=os.environ.get("LIBTPU_INIT_ARGS", ""),
      backend="simdevice" if backends.is_simdevice() else environment["backend"],
  )  # fmt: skip
