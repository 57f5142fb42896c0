"""docs/bots.md stays true: its game reference names every action, and its whole bot in
under 30 lines really passes `referee check-bot` in every game."""

import sys
from pathlib import Path

import pytest

import engines
from engines.reference import BEGIN, END
from referee.cli import main

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "bots.md"


def _whole_bot() -> str:
    after = GUIDE.read_text().split("<!-- whole-bot -->", 1)[1]
    return after.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.parametrize("game", engines.names())
def test_reference_covers_every_action_of_every_game(game):
    """The reference is generated from the schemas of describe() (refresh: python3 -m
    engines.reference --write docs/bots.md); it must at least name every game and every
    action type."""
    reference = GUIDE.read_text().split(BEGIN, 1)[1].split(END, 1)[0]
    section = reference.split(f"### {game}:", 1)
    assert len(section) == 2, f"docs/bots.md has no reference for {game}"
    for kind in engines.get(game).describe()["actions"]:
        assert f"`{kind}`" in section[1].split("\n### ", 1)[0], f"{game}: {kind} undocumented"


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
