"""compat.orbax's run_manifest: ckptbench's run environment in Orbax's fields."""

from __future__ import annotations

import subprocess

import jax

from ckptbench.compat.orbax.core import run_manifest


def _git(repo, *args: str) -> str:
  return subprocess.check_output(["git", *args], cwd=repo, text=True).strip()


def test_the_manifest_names_the_commit_whether_the_tree_is_dirty_and_the_topology(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  outside = run_manifest.capture_run_manifest()
  assert (outside.git_sha, outside.git_dirty) == ("unknown", False)
  _git(tmp_path, "init", "-q")
  (tmp_path / "f.txt").write_text("a")
  _git(tmp_path, "add", "f.txt")
  _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
  clean = run_manifest.capture_run_manifest()
  assert clean.git_sha == _git(tmp_path, "rev-parse", "HEAD") and clean.git_dirty is False
  (tmp_path / "f.txt").write_text("b")
  assert run_manifest.capture_run_manifest().git_dirty is True
  assert (clean.jax_device_count, clean.jax_process_count, clean.jax_process_index) == (len(jax.devices()), 1, 0)
  assert clean.backend == "cpu" and clean.jax_version == jax.__version__ and clean.orbax_version not in ("", "missing")
  assert "T" in clean.captured_at and clean.hostname


def test_the_flags_come_from_the_environment_and_the_markdown_has_three_sections(monkeypatch):
  monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/x")
  monkeypatch.delenv("LIBTPU_INIT_ARGS", raising=False)
  manifest = run_manifest.capture_run_manifest()
  assert (manifest.xla_flags, manifest.libtpu_init_args) == ("--xla_dump_to=/tmp/x", "")
  text = manifest.as_markdown()
  for heading in ("## Run manifest", "### Code", "### Environment", "### Topology"):
    assert heading in text
  assert "| `XLA_FLAGS` | `--xla_dump_to=/tmp/x` |" in text and "| `LIBTPU_INIT_ARGS` | `(unset)` |" in text
