"""`referee play`: a local match between bots at their URLs, each move printed, no Redis."""

import json

from bots.python import aladino_bot
from referee.cli import main


def test_play_prints_every_move_and_the_result(python_bot, node_bot_url, capsys, tmp_path):
    replay_file = tmp_path / "replay.json"
    with python_bot(aladino_bot.make_choose()) as url:
        status = main(["play", "--game", "aladino", "--bot", url, "--bot", node_bot_url,
                       "--seed", "5", "--replay", str(replay_file)])
    out = capsys.readouterr().out
    record = json.loads(replay_file.read_text())
    assert status == 0, out
    assert out.count("\nstep ") + out.startswith("step ") == len(record["steps"])
    assert f"game over after {len(record['steps'])} decisions" in out
    for seat, score in enumerate(record["result"]["scores"]):
        assert f"seat {seat} " in out and f"score {score}," in out


def test_play_reports_a_bot_that_is_not_there_as_a_forfeit(python_bot, capsys):
    with python_bot(aladino_bot.make_choose()) as url:
        status = main(["play", "--game", "aladino", "--bot", url,
                       "--bot", "http://127.0.0.1:9/", "--quiet"])
    out = capsys.readouterr().out
    assert status == 1
    assert "seat 1 forfeited at step 1 (crash: connection error" in out
    assert not any(line.startswith("step ") for line in out.splitlines())


def test_play_refuses_options_the_game_does_not_take(python_bot, capsys):
    with python_bot(aladino_bot.make_choose()) as url:
        status = main(["play", "--game", "aladino", "--bot", url, "--bot", url,
                       "--options", '{"speed": 2}'])
    assert status == 2
    assert "takes no options" in capsys.readouterr().err
