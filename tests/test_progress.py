"""Progress as a run prints it (views/_progress.py): piped, a line per look, never one per run or round."""

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
      "[2/8] warm-up: 2 benchmarks ok (1.50 s each)",
      "[8/8] rounds 1-3: 2 benchmarks ok (0.50-0.70 s each)",
      "look after 3 rounds: decided",
  ]


def test_piped_rounds_print_a_line_per_look_and_the_last(capsys):
  progress = RunProgress(20, terminal=False)
  for repeat in range(10):
    for b in ("a", "b"):
      progress.finished(b, repeat, False, 0.5, "host 0: OSError: full" if (b, repeat) == ("a", 8) else None)
    if repeat + 1 in (3, 6):
      progress.note(f"look after {repeat + 1} rounds: 1 of 1 comparisons undecided")
  progress.close()
  assert _lines(capsys) == [
      "[6/20] rounds 1-3: 2 benchmarks ok (0.50 s each)",
      "look after 3 rounds: 1 of 1 comparisons undecided",
      "[12/20] rounds 4-6: 2 benchmarks ok (0.50 s each)",
      "look after 6 rounds: 1 of 1 comparisons undecided",
      "[17/20] a repeat 8: FAILED: host 0: OSError: full (0.50 s)",
      "[20/20] rounds 7-10: 2 benchmarks, 1 of 8 runs FAILED (0.50 s each)",
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
      "[6/6] b: 1 warm-up(s) and repeats 0-1: 1 of 3 runs FAILED (0.40-1.00 s each)",
  ]


def test_a_silent_process_prints_nothing(capsys):
  progress = RunProgress(2, enabled=False, terminal=False)
  progress.finished("a", 0, False, 0.1, "boom")
  progress.note("a look")
  progress.close()
  assert _lines(capsys) == []
