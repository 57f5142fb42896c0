"""Whole matches with stdin/stdout bots (issue 18): the C bot through a real `referee bridge`
process and the Perl bot through `cmd:`, each against a Python SDK bot with `referee play`
(in-process runner, no Redis); a program that dies, writes junk or hangs ends its match as
the failure policy says, with the fault code an HTTP bot would get."""

import json
import os
import shlex
import signal
import subprocess
import sys

import pytest

import engines
from bots.python import random_bot
from referee.cli import main
from referee.processes import python_module
from referee.redis_server import free_port, wait_for_port
from referee.runner import FailurePolicy, PushSeat, run_match

PERL_BOT = "bots/perl/random_bot.pl"


@pytest.fixture(scope="module")
def c_bridge(c_bot, tmp_path_factory):
    """`referee bridge --port P --logs DIR -- random_bot 7` as a real process: (url, logs)."""
    logs = tmp_path_factory.mktemp("c-bridge-logs")
    port = free_port()
    bridge = subprocess.Popen(
        python_module("referee.cli", "bridge", "--port", str(port), "--logs", str(logs),
                      "--", str(c_bot), "7"),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for_port(port, timeout=60)
        yield f"http://127.0.0.1:{port}/", logs
    finally:
        bridge.send_signal(signal.SIGTERM)
        output, _ = bridge.communicate(timeout=60)
        assert bridge.returncode == 0, output
        assert f"as a bot at http://127.0.0.1:{port}/" in output


def play(tmp_path, game: str, seats: list[str], seed: int, *extra: str) -> dict:
    """`referee play`; the replay record (the exit status checked by the caller)."""
    replay = tmp_path / f"replay-{game}-{seed}.json"
    status = main(["play", "--game", game, *(arg for url in seats for arg in ("--bot", url)),
                   "--seed", str(seed), "--quiet", "--replay", str(replay), *extra])
    record = json.loads(replay.read_text())
    record["exit_status"] = status
    return record


def assert_clean_finished_match(record: dict) -> None:
    """No fault, no forfeit, and the engine replays the actions to the same result."""
    assert record["exit_status"] == 0
    assert record["forfeit"] is None
    assert all(step["fault"] is None for step in record["steps"])
    engine = engines.get(record["game"])
    state = engine.new_game(record["num_players"], record["seed"], record["options"])
    for step in record["steps"]:
        state = engine.apply(state, step["action"])
    assert engine.is_over(state) and engine.result(state) == record["result"]


@pytest.mark.parametrize("game", engines.names())
def test_the_c_bot_plays_a_full_match_through_referee_bridge(c_bridge, python_bot, tmp_path,
                                                             game):
    url, logs = c_bridge
    with python_bot(random_bot.make_choose(3)) as python_url:
        record = play(tmp_path, game, [url, python_url], seed=21)
    assert_clean_finished_match(record)
    assert any(step["seat"] == 0 for step in record["steps"])
    log = (logs / "local-21-seat0.log").read_text()
    assert log.count("started pid") >= 1


@pytest.mark.parametrize("game", engines.names())
def test_the_perl_bot_plays_a_full_match_through_cmd(python_bot, tmp_path, game):
    with python_bot(random_bot.make_choose(4)) as python_url:
        record = play(tmp_path, game, [f"cmd:perl {PERL_BOT} 5", python_url], seed=22)
    assert_clean_finished_match(record)
    assert record["seats"][0]["name"] == f"cmd:perl {PERL_BOT} 5"


def test_two_seats_of_one_match_get_a_program_each(c_bot, tmp_path):
    record = play(tmp_path, "caravans", [f"cmd:{c_bot} 1", f"cmd:{c_bot} 2", f"cmd:{c_bot} 1"],
                  seed=23)
    assert_clean_finished_match(record)


def test_play_refuses_a_command_that_cannot_run(capsys):
    status = main(["play", "--game", "aladino", "--bot", "cmd:no-such-program-here --x",
                   "--bot", "cmd:"])
    assert status == 2
    assert "cannot run 'no-such-program-here'" in capsys.readouterr().err


def test_bridge_refuses_to_start_without_a_command(capsys):
    assert main(["bridge", "--port", str(free_port()), "--"]) == 2
    assert "the command line is empty" in capsys.readouterr().err


# ----- faults end matches as the failure policy says ------------------------------------------
FAULTS = {
    # mode and its arguments, the fault code, the seat's deadline
    "die": (("die-at", "3"), "crash", 10000),
    "garbage": (("garbage-at", "3"), "malformed", 10000),
    "hang": (("hang-at", "3", "7"), "timeout", 3000),
}


def faulty_match(stdio_bot, python_bot, program, fault: str, policy: str) -> dict:
    """Aladino, seat 0 a misbehaving program behind a bridge, seat 1 an SDK bot."""
    mode, _, deadline_ms = FAULTS[fault]
    with stdio_bot(program(*mode)) as url, python_bot(random_bot.make_choose(5)) as other:
        seats = [PushSeat(url, deadline_ms), PushSeat(other, 30000)]
        return run_match("aladino", 31, {}, seats,
                         FailurePolicy.uniform(policy, strike_limit=None),
                         match_id=f"faulty-{fault}-{policy}")


def seat0_steps(record: dict) -> list[dict]:
    return [step for step in record["steps"] if step["seat"] == 0]


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_fault_under_forfeit_ends_the_match_at_that_decision(stdio_bot, python_bot, program,
                                                               fault):
    record = faulty_match(stdio_bot, python_bot, program, fault, "forfeit")
    code = FAULTS[fault][1]
    assert record["forfeit"]["seat"] == 0 and record["forfeit"]["fault"] == code
    steps = seat0_steps(record)
    assert len(steps) == 3, "the program misbehaves at its third decision"
    assert [step["fault"] is None for step in steps] == [True, True, False]
    assert steps[-1]["fault"]["policy"] == "forfeit"
    assert record["result"]["ranks"] == [2, 1]
    if fault == "garbage":
        assert steps[-1]["fault"]["raw"] == "this is not json"


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_fault_under_random_plays_on_with_a_strike(stdio_bot, python_bot, program, fault):
    record = faulty_match(stdio_bot, python_bot, program, fault, "random")
    code = FAULTS[fault][1]
    assert record["forfeit"] is None
    faults = [step["fault"] for step in seat0_steps(record) if step["fault"]]
    assert seat0_steps(record)[2]["fault"]["code"] == code
    assert all(item["code"] == code and item["policy"] == "random" for item in faults)
    assert record["strikes"][0] == len(faults) >= 1
    if fault == "die":  # a dead program's match keeps failing: every later decision
        assert len(faults) == len(seat0_steps(record)) - 2
    if fault == "garbage":  # the program lives on: one junk line, one strike
        assert len(faults) == 1
    engine = engines.get("aladino")
    state = engine.new_game(2, 31, {})
    for step in record["steps"]:
        state = engine.apply(state, step["action"])
    assert engine.is_over(state) and engine.result(state) == record["result"]


def test_play_names_the_folder_of_the_programs_stderr(c_bot, tmp_path, capsys):
    record = play(tmp_path, "aladino", [f"cmd:{c_bot}", f"cmd:{c_bot} 9"], seed=24)
    err = capsys.readouterr().err
    folder = err.split("stderr of the cmd: programs: ", 1)[1].split()[0]
    assert record["exit_status"] == 0
    assert sorted(os.listdir(folder)) == ["local-24-seat0.log", "local-24-seat1.log"]


def test_the_python_example_bots_run_as_stdin_stdout_programs(tmp_path):
    python = shlex.quote(sys.executable)
    record = play(tmp_path, "aladino", [f"cmd:{python} -m bots.python.aladino_bot --stdio",
                                        f"cmd:{python} -m bots.python.random_bot --stdio"],
                  seed=25)
    assert_clean_finished_match(record)
