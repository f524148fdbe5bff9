"""Removing a run's checkpoint: the whole tree, several threads at once, links never followed."""

from __future__ import annotations

import os

from ckptbench.engine.output._locations import remove_location


def test_a_checkpoint_tree_goes_and_what_its_links_point_to_stays(tmp_path):
  run = tmp_path / "run"
  (run / "ckpt" / "d").mkdir(parents=True)
  for i in range(20):
    (run / "ckpt" / "d" / f"chunk_{i}").write_bytes(b"x" * 1024)
  (run / "ckpt" / "_METADATA").write_text("{}")
  outside = tmp_path / "outside"
  outside.mkdir()
  (outside / "keep").write_text("kept")
  os.symlink(outside, run / "ckpt" / "linked_dir")
  os.symlink(outside / "keep", run / "linked_file")

  remove_location(run)

  assert not run.exists()
  assert (outside / "keep").read_text() == "kept"
  remove_location(run)  # already gone: nothing to do, no error
