"""Time controls (issue 26): the clock arithmetic, the time a push bot is charged (from the
request written to the answer arrived, as the kernel dated it), and a local match on a
clock, verified."""

from __future__ import annotations

import asyncio
import time

import pytest

from referee.match.botclient import BotClient
from referee.match.clock import Clocks, TimeControl, TimeControlError
from referee.match.runner import FailurePolicy, PushSeat, run_match
from referee.match.verify import verify
from tests.support.timed_bot import TimedBot, bot_process, logged_decisions


def test_a_decision_may_take_the_clock_plus_the_bank_capped_plus_the_first_allowance():
    clocks = Clocks.start(TimeControl(2000, 100, max_move_ms=1500, first_move_ms=3000,
                                      overdraft_ms=500), 2)
    assert clocks.deadline_ms(0) == 1500 + 3000, "capped by max_move_ms, plus the first move"
    assert not clocks.charge(0, 3400)  # 3000 from the allowance, 400 from the clock
    assert clocks.record() == {"remaining_ms": [1700, 2000], "overdraft_ms": [500, 500]}
    assert clocks.deadline_ms(0) == 1500, "no allowance after the first decision"
    assert not clocks.charge(0, 1500)  # the clock (1700) pays
    assert clocks.remaining[0] == 300 and clocks.bank[0] == 500
    assert clocks.deadline_ms(0) == 800, "clock and bank"
    assert not clocks.charge(0, 700)  # 300 from the clock, 400 from the bank, then +100
    assert clocks.record()["remaining_ms"][0] == 100 and clocks.bank[0] == 100
    assert clocks.charge(0, 200.5), "over its 200 ms: a timeout"
    assert clocks.remaining[0] == 100 and clocks.bank[0] == 0, "empty, then the increment"


def test_the_clocks_replay_from_the_recorded_steps():
    control = TimeControl(1000, 50, overdraft_ms=200)
    steps = [{"seat": n % 2, "elapsed_ms": 10.5 * n} for n in range(12)]
    clocks = Clocks.start(control, 2)
    for step in steps:
        clocks.charge(step["seat"], step["elapsed_ms"])
    assert Clocks.replay(control, 2, steps) == clocks


@pytest.mark.parametrize(("data", "field"), [
    ({"base_ms": -1}, "base_ms"), ({"base_ms": 0}, "no time"), ({"base_ms": 1.5}, "base_ms"),
    ({"base_ms": 1000, "max_move_ms": 0}, "max_move_ms"), ({"base_ms": True}, "base_ms"),
    ({"base_ms": 10, "colour": "white"}, "colour")])
def test_a_time_control_that_makes_no_sense_is_refused(data, field):
    with pytest.raises(TimeControlError, match=field):
        TimeControl.from_dict(data)


def test_the_command_line_form_is_base_plus_increment_or_the_api_object():
    assert TimeControl.parse("2000+100") == TimeControl(2000, 100)
    assert TimeControl.parse('{"base_ms": 5, "first_move_ms": 9}') == TimeControl(
        5, first_move_ms=9)
    with pytest.raises(TimeControlError):
        TimeControl.parse("two seconds")


def test_an_answer_that_arrived_in_time_is_in_time_however_late_the_referee_reads_it():
    """The referee's own delay is never charged: the event loop is blocked for 600 ms while
    the bot answers after 100 ms; the answer is dated when the kernel received it."""
    decision = {"protocol": "referee/1", "type": "decision", "deadline_ms": 400,
                "legal_actions": [{"type": "pass"}], "step": 0}

    async def decide_while_busy(client: BotClient) -> tuple[float, str | None, float]:
        loop = asyncio.get_running_loop()
        loop.call_later(0.02, time.sleep, 0.6)  # the referee busy elsewhere
        started = time.monotonic()
        reply = await client.decide(decision)
        await client.aclose()
        return reply.elapsed_ms, reply.fault, time.monotonic() - started

    bot = TimedBot(fixed_ms=100)
    with bot.running() as url:
        elapsed, fault, wall = asyncio.run(decide_while_busy(BotClient(url)))
    assert wall > 0.6, "the loop was blocked past the deadline"
    assert fault is None and 95 <= elapsed < 400, elapsed


def test_an_answer_after_the_deadline_is_a_timeout_charged_the_deadline():
    bot = TimedBot(fixed_ms=300)
    decision = {"deadline_ms": 100, "legal_actions": [{}], "type": "decision"}
    with bot.running() as url:
        reply = asyncio.run(BotClient(url).decide(decision))
    assert reply.fault == "timeout" and 100 <= reply.elapsed_ms < 300


def test_a_local_match_on_a_clock_records_every_clock_and_verifies(tmp_path):
    """A bot that answers deadline - 150 ms on every decision never loses on time (the
    margin holds on a loaded machine: the bot runs in a process of its own, which this
    test's threads and collections cannot hold up); every step's clock is in the record,
    and a verifier charges the clocks again."""
    control = TimeControl(600, 60, first_move_ms=200)
    with bot_process(tmp_path, "--margin-ms", "150") as (url, log):
        record = run_match("aladino", 3, {}, [PushSeat(url), PushSeat(url)],
                           FailurePolicy(), "m-clock", time_control=control)
    decisions = logged_decisions(log)
    assert record["time_control"] == control.to_dict()
    assert all(step["fault"] is None for step in record["steps"]), [
        step for step in record["steps"] if step["fault"]]
    first = decisions[0]
    assert first["deadline_ms"] == 800 and first["clock"] == {
        "remaining_ms": [600, 600], "increment_ms": 60, "overdraft_ms": [0, 0],
        "deadline_ms": 800}
    later = decisions[4]
    assert later["clock"]["deadline_ms"] == later["deadline_ms"] < 600, "the clock ran down"
    assert all("clock" in step for step in record["steps"])
    assert verify(record).valid
    tampered = {**record, "steps": [dict(step) for step in record["steps"]]}
    tampered["steps"][3]["clock"] = {"remaining_ms": [9999, 9999], "overdraft_ms": [0, 0]}
    report = verify(tampered)
    assert report.problem is not None and report.problem.field in ("clock", "state_hash")


def test_a_bot_that_overruns_loses_on_time_at_its_first_overrun():
    control = TimeControl(300, 0)
    bot = TimedBot(fixed_ms=120)  # the third answer of a seat is over its 300 ms
    with bot.running() as url:
        record = run_match("aladino", 3, {}, [PushSeat(url), PushSeat(url)],
                           FailurePolicy(), "m-flag", time_control=control)
    (faulted,) = [step for step in record["steps"] if step["fault"]]
    assert faulted["fault"]["code"] == "timeout" and faulted["fault"]["policy"] == "forfeit"
    assert record["forfeit"]["seat"] == faulted["seat"]
    assert faulted["clock"]["remaining_ms"][faulted["seat"]] == 0
    assert [s["seat"] for s in record["steps"]].count(faulted["seat"]) == 3
    assert verify(record).valid
