"""docs/bots.md stays true: its game reference matches the engines, and its whole bot in
under 30 lines really passes `referee check-bot` in every game."""

import sys
from pathlib import Path

import pytest

import engines
from bots.python.reference import BEGIN, END, render_all
from referee.cli import main

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "bots.md"


def _whole_bot() -> str:
    after = GUIDE.read_text().split("<!-- whole-bot -->", 1)[1]
    return after.split("```python\n", 1)[1].split("```", 1)[0]


def test_reference_matches_the_engines_describe():
    text = GUIDE.read_text()
    embedded = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert embedded == "\n" + render_all(), "run: python3 -m bots.python.reference --write " \
                                            "docs/bots.md"


def test_the_whole_bot_is_under_30_lines():
    assert len(_whole_bot().splitlines()) < 30


@pytest.fixture
def whole_bot_url(process_bot, tmp_path):
    script = tmp_path / "tiny_bot.py"
    script.write_text(_whole_bot())
    with process_bot([sys.executable, str(script), "{port}"]) as url:
        yield url


def test_the_whole_bot_passes_check_bot_in_every_game(whole_bot_url, capsys):
    for game in engines.names():
        status = main(["check-bot", whole_bot_url, "--game", game, "--playouts", "1"])
        assert status == 0, capsys.readouterr().out
