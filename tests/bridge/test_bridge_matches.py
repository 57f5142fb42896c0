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
import time

import pytest

import engines
from bots.python import random_bot
from referee.cli import main
from referee.match.runner import FailurePolicy, PushSeat, run_match
from referee.processes import python_module
from referee.redis_server import free_port, wait_for_port
from tests.support.apitest import ADMIN, worker_env

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


@pytest.mark.parametrize("game", engines.names())
def test_the_c_and_perl_bots_take_updates_without_answering_them(c_bot, tmp_path, game):
    """With updates on (`--updates`) each seat hears the other's steps as lines it must not
    answer. (Before: both bots answered an update with an error line, taken for the next
    decision's answer: a forfeit at the bot's second decision, a helper's audit.)"""
    record = play(tmp_path, game, [f"cmd:{c_bot} 3", f"cmd:perl {PERL_BOT} 4"], 26,
                  "--updates")
    assert_clean_finished_match(record)


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


@pytest.mark.parametrize("option", [["--stderr-mb", "0"], ["--max-programs", "0"],
                                    ["--idle-timeout", "-1"], ["--logs-mb", "-1"]])
def test_bridge_refuses_limits_out_of_range(capsys, option):
    assert main(["bridge", "--port", str(free_port()), *option, "--", "cat"]) == 2
    assert f"{option[0]} must be" in capsys.readouterr().err


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


# ----- through the real API and workers ------------------------------------------------------


def _post(app_url: str, path: str, body: dict) -> dict:
    import requests

    response = requests.post(f"{app_url}{path}", json=body, timeout=30,
                             headers={"Authorization": f"Bearer {ADMIN}"})
    assert response.status_code == 201, response.text
    return response.json()


def _burst_worker(redis_url: str, app_url: str) -> None:
    done = subprocess.run(python_module("referee.cli", "worker", "--burst"), timeout=300,
                          env={**worker_env(redis_url), "REFEREE_PUBLIC_URL": app_url},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


def _bridge(port: int, logs, secret: str, *argv: str) -> subprocess.Popen:
    process = subprocess.Popen(
        python_module("referee.cli", "bridge", "--port", str(port), "--logs", str(logs),
                      "--secret", secret, "--", *argv),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wait_for_port(port, timeout=60)
    return process


def test_the_c_bot_plays_every_game_through_the_api_and_workers_with_signed_requests(
        app_url, redis_url, c_bot, python_bot, tmp_path):
    """The C bot behind a real bridge that checks the referee's signature with the secret
    `POST /bots` answered, against an SDK bot, on real workers; every bot hears how each
    of its matches ended."""
    import requests

    notices: list[dict] = []
    port = free_port()
    with python_bot(random_bot.make_choose(3), on_result=notices.append) as sdk_url:
        c = _post(app_url, "/bots", {"name": "c bot", "url": f"http://127.0.0.1:{port}/",
                                      "games": engines.names()})
        sdk = _post(app_url, "/bots", {"name": "sdk bot", "url": sdk_url,
                                        "games": engines.names()})
        bridge = _bridge(port, tmp_path / "logs", c["secret"], str(c_bot), "11")
        try:
            ids = [_post(app_url, "/matches", {
                "game": game, "seed": 21, "deadline_ms": 10000,
                "seats": [{"kind": "bot", "bot_id": c["id"]},
                          {"kind": "bot", "bot_id": sdk["id"]}]})["id"]
                for game in engines.names()]
            _burst_worker(redis_url, app_url)
            deadline = time.monotonic() + 30
            while len(notices) < len(ids) and time.monotonic() < deadline:
                time.sleep(0.05)  # notices are sent after the worker counted each match
        finally:
            bridge.send_signal(signal.SIGTERM)
            bridge.communicate(timeout=60)
    for match_id in ids:
        record = requests.get(f"{app_url}/matches/{match_id}/replay", timeout=30).json()
        assert record["forfeit"] is None and not any(s["fault"] for s in record["steps"])
        report = requests.post(f"{app_url}/replays/verify", json=record, timeout=30).json()
        assert report["valid"] and report["signature"] == "valid"
    assert sorted(n["match_id"] for n in notices) == sorted(ids)
    for notice in notices:
        assert notice["protocol"] == "referee/1" and notice["seat"] == 1
        assert notice["replay_url"] == f"{app_url}/matches/{notice['match_id']}/replay"
        assert requests.get(notice["replay_url"], timeout=30).json()["result"] == \
            notice["result"]


def test_a_stdin_stdout_program_reads_the_result_then_eof(app_url, redis_url, program,
                                                        python_bot, tmp_path):
    lines = tmp_path / "lines.txt"
    port = free_port()
    with python_bot(random_bot.make_choose(4)) as sdk_url:
        bot = _post(app_url, "/bots", {"name": "recorder", "url": f"http://127.0.0.1:{port}/",
                                        "games": ["aladino"]})
        sdk = _post(app_url, "/bots", {"name": "sdk", "url": sdk_url, "games": ["aladino"]})
        bridge = _bridge(port, tmp_path / "logs", bot["secret"], *program("record", str(lines)))
        try:
            match = _post(app_url, "/matches", {
                "game": "aladino", "seed": 5, "seats": [{"kind": "bot", "bot_id": bot["id"]},
                                                        {"kind": "bot", "bot_id": sdk["id"]}]})
            _burst_worker(redis_url, app_url)
            deadline = time.monotonic() + 30
            while not lines.read_text().endswith("EOF\n") and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            bridge.send_signal(signal.SIGTERM)
            bridge.communicate(timeout=60)
    *decisions, result, eof = lines.read_text().splitlines()
    assert eof == "EOF" and all(json.loads(d)["type"] == "decision" for d in decisions)
    notice = json.loads(result)
    assert notice["type"] == "result" and notice["match_id"] == match["id"]
    assert notice["seat"] == 0 and notice["result"]["ranks"]
