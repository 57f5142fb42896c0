"""Time controls through the real API and `referee worker` processes (issue 26): a hundred
matches on a clock at once on one worker, each bot using its time to the last 50 ms, lose
nothing on time; a pull seat sees and is charged the same clock; a worker killed mid-match
charges nothing for the outage."""

from __future__ import annotations

import time
from contextlib import ExitStack
from pathlib import Path

import orjson

from referee.bridge import BridgeConfig, running_bridge
from referee.match.clock import Clocks, TimeControl
from referee.match.verify import verify
from tests.support.apitest import ADMIN
from tests.support.bot_servers import stdio_program
from tests.support.live_server import wait_status
from tests.support.timed_bot import TimedBot, bot_process, logged_decisions
from tests.support.tournament_checks import check_logged_once
from tests.support.updates import clocks_before, expected_updates

CLOCK = {"base_ms": 2000, "increment_ms": 100}


def clocked_match(api, bots: list[str], seed: int, clock: dict = CLOCK) -> str:
    response = api.post("/matches", token=ADMIN, json={
        "game": "aladino", "seats": [{"kind": "bot", "bot_id": bot} for bot in bots],
        "seed": seed, "time_control": clock})
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["time_control"]["base_ms"] == clock["base_ms"]
    return response.get_json()["id"]


def wait_all_quietly(api, match_ids: list[str], timeout: float = 300) -> None:
    """Wait for every match to finish, asking once a second (this process's CPU is the
    bot's and the worker's to use meanwhile)."""
    deadline = time.monotonic() + timeout
    pending = list(match_ids)
    while pending:
        assert time.monotonic() < deadline, f"{len(pending)} matches unfinished"
        time.sleep(1)
        pending = [m for m in pending if api.get(f"/matches/{m}").get_json()["status"]
                   not in ("finished", "failed")]


def test_a_hundred_matches_at_once_on_one_worker_lose_nothing_on_time(api, workers,
                                                                      tmp_path):
    """Each answer leaves deadline_ms - 50 ms after its request arrived (as the bot's kernel
    dated it). A timeout of an answer the bot itself sent on time (by its own clock, at most
    10 ms off its plan) is a referee-caused time loss: there must be none. The bots run in
    processes of their own, 25 matches each (one Python process answering a hundred
    decisions that all fall due at once is late by itself); a bot that does wake up late
    shows it on its own clock, and that loss is the bot's."""
    with ExitStack() as stack:
        served = [stack.enter_context(bot_process(tmp_path / f"bot{n}", "--margin-ms", "50"))
                  for n in range(4)]
        pairs = [[api.register_bot(url, name=f"clocked {n}.{seat}") for seat in range(2)]
                 for n, (url, _) in enumerate(served)]
        match_ids = [clocked_match(api, pairs[seed % 4], seed) for seed in range(100)]
        workers.start_ready(1, REFEREE_BOT_MAX_MATCHES="100")
        wait_all_quietly(api, match_ids)
    decisions = {(d["match_id"], d["step"]): d for _, log in served
                 for d in logged_decisions(log)}
    referee_caused, bot_caused, steps = [], [], 0
    for match_id in match_ids:
        record = api.get(f"/matches/{match_id}/replay").get_json()
        assert record["time_control"]["base_ms"] == 2000
        for step in record["steps"]:
            steps += 1
            if step["fault"] is None:
                continue
            sent = decisions[(match_id, step["step"])]
            times = sent["bot_ms"]  # the answer was in the referee's socket once `sent`
            own_ms = (times["sent"] or times["answered"]) - times["arrived"]
            late = own_ms > sent["deadline_ms"] - 40  # the bot itself 10 ms off its plan
            (bot_caused if late else referee_caused).append((match_id, step, own_ms, times))
    assert not referee_caused, referee_caused[:3]
    # A loaded machine makes the bots late by their own clocks (those losses are theirs,
    # however many): the check has its power from the decisions answered on time.
    assert steps - len(bot_caused) > 1000 and len(decisions) >= steps, bot_caused[:3]
    assert all(d["clock"]["deadline_ms"] == d["deadline_ms"] for d in decisions.values())
    check_logged_once(api, match_ids)


def test_an_overrun_loses_on_time_and_the_replay_shows_the_clocks(api, run_worker):
    bot = TimedBot(fixed_ms=150)
    with bot.running() as url:
        bots = [api.register_bot(url, name=f"slow {n}") for n in range(2)]
        match_id = clocked_match(api, bots, 1, {"base_ms": 400, "increment_ms": 0})
        run_worker()
    record = api.get(f"/matches/{match_id}/replay").get_json()
    last = record["steps"][-1]
    assert last["fault"]["code"] == "timeout" and record["forfeit"]["seat"] == last["seat"]
    assert [s["seat"] for s in record["steps"]].count(last["seat"]) == 3
    assert last["clock"]["remaining_ms"][last["seat"]] == 0
    assert verify(record).valid


def test_a_pull_seat_sees_its_clock_and_is_charged_until_its_move_arrived(api, workers):
    """The observation carries the same clock a push bot gets; the step's elapsed_ms runs
    from when the decision was put to when the API took the move."""
    bot = TimedBot(fixed_ms=20)
    with bot.running() as url:
        pushed = api.register_bot(url, name="pushed")
        created = api.post("/matches", token=ADMIN, json={
            "game": "aladino", "seats": [{"kind": "pull"}, {"kind": "bot", "bot_id": pushed}],
            "seed": 2, "time_control": {"base_ms": 60000, "increment_ms": 500,
                                        "first_move_ms": 1000}}).get_json()
        token = created["tokens"][0]["token"]
        workers.start_ready(1)
        seen = None
        for _ in range(200):
            seen = api.get(f"/matches/{created['id']}/observation", token=token).get_json()
            if seen.get("to_move") == 0:
                break
            time.sleep(0.05)
        assert seen["clock"] == {"remaining_ms": [60000, 60000], "increment_ms": 500,
                                 "overdraft_ms": [0, 0], "deadline_ms": 61000}
        time.sleep(0.3)
        moved = api.post(f"/matches/{created['id']}/actions", token=token, json={
            "step": seen["step"], "action": seen["legal_actions"][0]})
        assert moved.status_code in (200, 202), moved.get_json()
        record = None
        for _ in range(200):
            record = api.get(f"/matches/{created['id']}/replay", token=ADMIN).get_json()
            if record["steps"] and record["steps"][0]["seat"] == 0:
                break
            time.sleep(0.05)
    step = record["steps"][0]
    # the 300 ms the client waited, give or take the few ms between the driver putting the
    # decision (its clock starts) and the observation it had already been able to read
    assert 250 <= step["elapsed_ms"] < 5000, step
    clocks = Clocks.start(TimeControl(60000, 500, first_move_ms=1000), 2)
    clocks.charge(0, step["elapsed_ms"])
    assert step["clock"] == clocks.record()


def test_a_worker_killed_mid_match_charges_nothing_for_the_outage(api, workers, tmp_path):
    """kill -9 of the worker while a decision is in flight, and no worker for 3 s: the match
    resumes on another worker; the decision in flight is asked again with the seat's time
    as its clock says, and no step is charged the outage."""
    with bot_process(tmp_path, "--fixed-ms", "200") as (url, _):
        bots = [api.register_bot(url, name=f"steady {n}") for n in range(2)]
        match_id = clocked_match(api, bots, 5, {"base_ms": 60000, "increment_ms": 0})
        (doomed,) = workers.start_ready(1)
        deadline = time.monotonic() + 60
        while api.get(f"/matches/{match_id}").get_json()["step"] < 4:
            assert time.monotonic() < deadline, "the match did not start"
            time.sleep(0.05)
        time.sleep(0.1)  # within the next decision's 200 ms
        workers.kill(doomed)
        time.sleep(3)
        workers.start_ready(1)
        wait_status(api, match_id, "finished", timeout=120)
    record = api.get(f"/matches/{match_id}/replay").get_json()
    assert all(step["fault"] is None for step in record["steps"])
    assert max(step["elapsed_ms"] for step in record["steps"]) < 1500, "the outage was charged"
    assert verify(record).valid
    last = Clocks.replay(TimeControl(60000), 2, record["steps"])
    assert record["steps"][-1]["clock"] == last.record()
    spent = [60000 - ms for ms in record["steps"][-1]["clock"]["remaining_ms"]]
    moves = [sum(1 for s in record["steps"] if s["seat"] == seat) for seat in range(2)]
    assert all(spent[seat] < moves[seat] * 1000 for seat in range(2)), (spent, moves)


def test_the_first_move_allowance_and_the_bank_are_spent_in_that_order(api, run_worker,
                                                                       tmp_path):
    """docs/bots.md, Clocks: a seat's first decision is paid from first_move_ms, later ones
    from its clock, then from its bank (overdraft_ms); past them, a timeout. The bot answers
    every decision in 300 ms: from a 500 ms allowance, a 300 ms clock and a 400 ms bank, it
    makes three moves and loses on time on the fourth."""
    clock = {"base_ms": 300, "increment_ms": 0, "first_move_ms": 500, "overdraft_ms": 400}
    with bot_process(tmp_path, "--fixed-ms", "300") as (url, _):
        bots = [api.register_bot(url, name=f"even {n}") for n in range(2)]
        match_id = clocked_match(api, bots, 7, clock)
        run_worker(120)
    record = api.get(f"/matches/{match_id}/replay").get_json()
    seat = record["forfeit"]["seat"]
    mine = [step for step in record["steps"] if step["seat"] == seat]
    assert len(mine) == 4 and mine[-1]["fault"]["code"] == "timeout"
    assert all(step["fault"] is None for step in mine[:3])
    after = [(step["clock"]["remaining_ms"][seat], step["clock"]["overdraft_ms"][seat])
             for step in mine]
    assert after[0] == (300, 400), "the first move was paid from its allowance"
    # (a busy referee charges a few ms less, never more: its clock is read after the write)
    assert after[1][0] < 10 and 300 < after[1][1] <= 400, "then the clock, the rest from the bank"
    assert after[2][0] == 0 and 0 < after[2][1] < 150, "then the bank"
    assert after[3] == (0, 0)
    assert verify(record).valid


def test_stdin_and_push_seats_see_the_same_clocks_and_hear_their_updates(
        api, run_worker, bot_server, tmp_path):
    """Through a worker: seat 0 a stdin program behind a bridge, seat 1 an HTTP bot, both
    registered with `updates`. Every decision line the program read carries the clock the
    replay gives that step, as the HTTP bot's requests do; each heard exactly its updates
    (the program never answers them)."""
    lines = tmp_path / "stdin.jsonl"
    config = BridgeConfig(tuple(stdio_program("record", str(lines))), tmp_path / "logs")
    with running_bridge(config) as bridge_url:
        bots = [register_listening(api, url, name)
                for url, name in ((bridge_url, "stdin"), (bot_server.url("/random"), "http"))]
        match_id = clocked_match(api, bots, 4, {"base_ms": 30_000, "increment_ms": 100,
                                                "first_move_ms": 500})
        run_worker()
        record = api.get(f"/matches/{match_id}/replay").get_json()
        heard = wait_for_lines(lines, lambda read: read[-1].get("type") == "result")
    assert all(step["fault"] is None for step in record["steps"])
    decisions = [line for line in heard if line["type"] == "decision"]
    asked = [request for request in bot_server.received["/random"]
             if request["match_id"] == match_id]
    for seen in decisions + asked:
        assert seen["clock"] == clocks_before(record, seen["step"]), seen["step"]
        assert seen["clock"]["deadline_ms"] == seen["deadline_ms"]
    assert {seen["seat"] for seen in decisions} == {0} and len(decisions) + len(asked) == len(
        record["steps"])
    assert [line for line in heard if line["type"] == "update"] == expected_updates(record, 0)
    assert [update for update in bot_server.updates["/random"]
            if update["match_id"] == match_id] == expected_updates(record, 1)


def test_a_push_bots_update_is_sent_before_its_match_parks_for_a_pull_seat(
        api, workers, bot_server):
    """The worker lets go of a match waiting for a pull move: the update it owes the push
    seat is still delivered (the seat is closed once it is sent)."""
    pushed = register_listening(api, bot_server.url("/random"), "pushed")
    created = api.post("/matches", token=ADMIN, json={
        "game": "aladino", "seats": [{"kind": "bot", "bot_id": pushed}, {"kind": "pull"}],
        "seed": 6, "pull_deadline_ms": 120_000}).get_json()
    match_id, token = created["id"], created["tokens"][0]["token"]
    workers.start_ready(1)
    for _ in range(3000):
        seen = api.get(f"/matches/{match_id}/observation", token=token).get_json()
        if seen["status"] in ("finished", "failed"):
            break
        if seen.get("to_move") == 1:
            moved = api.post(f"/matches/{match_id}/actions", token=token, json={
                "step": seen["step"], "action": seen["legal_actions"][0]})
            assert moved.status_code in (200, 202), moved.get_json()
        time.sleep(0.02)
    record = api.get(f"/matches/{match_id}/replay").get_json()
    assert record["result"]["ranks"], "the match was played to its end"
    wanted = expected_updates(record, 0)
    assert wanted
    deadline = time.monotonic() + 30
    while len([u for u in bot_server.updates["/random"] if u["match_id"] == match_id]) < len(
            wanted) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [update for update in bot_server.updates["/random"]
            if update["match_id"] == match_id] == wanted


def register_listening(api, url: str, name: str) -> str:
    """A bot registered with `updates`; its id."""
    response = api.post("/bots", token=ADMIN, json={"name": name, "url": url,
                                                    "games": ["aladino"], "updates": True})
    assert response.status_code == 201 and response.get_json()["updates"] is True
    return response.get_json()["id"]


def wait_for_lines(path: Path, done, timeout: float = 60) -> list[dict]:
    """The JSON lines a program recorded, once `done(lines)` holds."""
    deadline = time.monotonic() + timeout
    while True:
        text = path.read_text() if path.exists() else ""
        read = [orjson.loads(line) for line in text.splitlines() if line and line != "EOF"]
        if read and done(read):
            return read
        assert time.monotonic() < deadline, f"the program read {len(read)} lines"
        time.sleep(0.05)
