"""`referee check-bot` passes the example bots and flags a deliberately broken one."""

import time

import pytest

import engines
from bots.python import random_bot
from bots.python.arena import bot_factory
from referee.cli import main


def broken_aladino_choose(observation, legal_actions):
    """Illegal on moves, malformed on Genie placements, too slow on Magic Carpet flights."""
    kind = legal_actions[0]["type"]
    if kind == "move":
        return {"type": "move", "direction": 9}
    if kind == "place_genie":
        return "the ruby row, please"
    time.sleep(1.0)
    return legal_actions[0]


def _check(url, game, *extra):
    return main(["check-bot", url, "--game", game, "--playouts", "2", *extra])


def test_check_bot_flags_illegal_malformed_and_late_answers_with_the_reason(python_bot, capsys):
    with python_bot(broken_aladino_choose) as url:
        status = _check(url, "aladino", "--per-phase", "1", "--deadline-ms", "300")
    out = capsys.readouterr().out
    assert status == 1
    assert "FAILED: 0 of" in out
    assert "ILLEGAL" in out and "\"direction\" must be an integer from 0 to 5" in out
    assert "MALFORMED" in out and '"action" object' in out
    assert "answer: {\"action\":\"the ruby row, please\"}" in out
    assert "TIMEOUT" in out and "deadline of 300 ms" in out


@pytest.mark.parametrize("game", engines.names())
def test_check_bot_passes_the_python_random_bot(python_bot, capsys, game):
    with python_bot(random_bot.make_choose(0)) as url:
        status = _check(url, game)
    out = capsys.readouterr().out
    assert status == 0, out
    assert "passed:" in out and "note:" not in out


@pytest.mark.parametrize("game", engines.names())
def test_check_bot_passes_the_node_random_bot(node_bot_url, capsys, game):
    status = _check(node_bot_url, game)
    out = capsys.readouterr().out
    assert status == 0, out


@pytest.mark.parametrize("game", engines.names())
def test_check_bot_passes_the_heuristic_bots(python_bot, capsys, game):
    with python_bot(bot_factory(f"{game}_bot")()) as url:
        status = _check(url, game)
    assert status == 0, capsys.readouterr().out
