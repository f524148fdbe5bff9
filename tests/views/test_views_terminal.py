"""The commands' console prints names as written, and highlights where it has colours to show it."""

from __future__ import annotations

from ckptbench.views import make_console


def test_emoji_codes_in_a_name_are_printed_as_written(capsys, monkeypatch):
  monkeypatch.delenv("FORCE_COLOR", raising=False)
  make_console().print("[bold]launch :rocket: suite[/]: 2 runs")
  assert capsys.readouterr().out == "launch :rocket: suite: 2 runs\n"


def test_numbers_are_highlighted_where_colours_are_forced(capsys, monkeypatch):
  monkeypatch.setenv("FORCE_COLOR", "1")
  make_console().print("suite: 2 runs", markup=False)
  assert "\x1b[1;36m2\x1b[0m" in capsys.readouterr().out
