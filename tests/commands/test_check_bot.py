"""`referee check-bot` passes the example bots and flags a deliberately broken one."""

import shlex
import sys
import time

import pytest

import engines
from bots.python import random_bot
from bots.python.arena import bot_factory
from referee.cli import main


def broken_aladino_choose(observation, legal_actions):
    """On moves: a direction with no token (against the rules), or when every direction
    has one, direction 9 (no such direction: fails the action schema); not JSON on Genie
    placements; too slow on Magic Carpet flights."""
    kind = legal_actions[0]["type"]
    if kind == "move":
        blocked = [d for d in range(6) if {"type": "move", "direction": d} not in legal_actions]
        return {"type": "move", "direction": blocked[0] if blocked else 9}
    if kind == "place_genie":
        return "the ruby row, please"
    time.sleep(1.0)
    return legal_actions[0]


def slow_choose(observation, legal_actions):
    """A legal answer after 45 ms: what Nagle's algorithm with delayed ACKs looks like."""
    time.sleep(0.045)
    return legal_actions[0]


def _check(url, game, *extra):
    return main(["check-bot", url, "--game", game, "--playouts", "2", *extra])


def test_check_bot_flags_illegal_malformed_and_late_answers_with_the_reason(python_bot, capsys):
    with python_bot(broken_aladino_choose) as url:
        status = _check(url, "aladino", "--per-phase", "3", "--deadline-ms", "300")
    out = capsys.readouterr().out
    assert status == 1
    assert "FAILED: 0 of" in out
    assert "ILLEGAL" in out and "no token lies" in out
    assert "MALFORMED" in out and '"direction" must be an integer from 0 to 5' in out
    assert '"action" object' in out
    assert "answer: {\"action\":\"the ruby row, please\"" in out
    assert "TIMEOUT" in out and "deadline of 300 ms" in out


def test_check_bot_warns_of_a_median_answer_of_40_ms_on_loopback(python_bot, capsys):
    """Issue 15.9: the warning names the cause and the cure; the answers still pass."""
    with python_bot(slow_choose) as url:
        status = _check(url, "aladino", "--per-phase", "1", "--playouts", "1")
    out = capsys.readouterr().out
    assert status == 0, out
    warning = next(line for line in out.splitlines() if line.startswith("warning: "))
    assert "on loopback" in warning and "Nagle" in warning and "TCP_NODELAY" in warning
    assert "-Dsun.net.httpserver.nodelay=true" in warning


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


@pytest.mark.parametrize("game", engines.names())
def test_check_bot_passes_the_c_bot_given_as_a_command(c_bot, capsys, game):
    """cmd: runs the program behind a bridge; every decision starts a fresh program."""
    status = _check(f"cmd:{shlex.quote(str(c_bot))} 3", game)
    out = capsys.readouterr().out
    assert status == 0, out
    assert "stderr of the program: " in out


def test_check_bot_reports_a_command_that_answers_junk(capsys):
    status = _check(f"cmd:{shlex.quote(sys.executable)} -c 'print(\"hello\")'", "aladino",
                    "--per-phase", "1")
    out = capsys.readouterr().out
    assert status == 1
    assert "MALFORMED" in out and "answer: hello" in out
