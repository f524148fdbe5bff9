"""Progress as a run prints it (views/_progress.py): piped, a line per round, never one per run."""

from __future__ import annotations

from ckptbench.views import RunProgress


def _lines(capsys) -> list[str]:
  return capsys.readouterr().out.splitlines()


def test_piped_interleaved_rounds_print_a_line_per_round(capsys):
  progress = RunProgress(8, terminal=False)
  for b in ("a", "b"):
    progress.started(b, 0, True)
    progress.finished(b, 0, True, 1.5, None)
  for repeat in range(3):
    for b in ("b", "a") if repeat % 2 else ("a", "b"):
      progress.finished(b, repeat, False, 0.5 + repeat / 10, None)
  progress.note("look after 3 rounds: decided")
  progress.close()
  assert _lines(capsys) == [
      "[2/8] warm-up of 2 benchmarks: ok (1.50 s each)",
      "[4/8] repeat 0 of 2 benchmarks: ok (0.50 s each)",
      "[6/8] repeat 1 of 2 benchmarks: ok (0.60 s each)",
      "[8/8] repeat 2 of 2 benchmarks: ok (0.70 s each)",
      "look after 3 rounds: decided",
  ]


def test_piped_back_to_back_runs_print_a_line_per_benchmark_and_a_failure_at_once(capsys):
  progress = RunProgress(6, terminal=False)
  for b in ("a", "b"):
    progress.finished(b, 0, True, 1.0, None)
    for repeat in range(2):
      progress.finished(b, repeat, False, 0.4, "host 0: RuntimeError: boom" if (b, repeat) == ("b", 1) else None)
  progress.close()
  assert _lines(capsys) == [
      "[3/6] a: 1 warm-up(s) and repeats 0-1: ok (0.40-1.00 s each)",
      "[6/6] b repeat 1: FAILED: host 0: RuntimeError: boom (0.40 s)",
      "[6/6] b: 1 warm-up(s) and repeats 0-1: 1 of 3 FAILED (0.40-1.00 s each)",
  ]


def test_a_silent_process_prints_nothing(capsys):
  progress = RunProgress(2, enabled=False, terminal=False)
  progress.finished("a", 0, False, 0.1, "boom")
  progress.note("a look")
  progress.close()
  assert _lines(capsys) == []
