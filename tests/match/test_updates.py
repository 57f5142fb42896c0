"""Updates (issue 26, docs/bots.md "Updates"): a push bot registered with `updates` hears,
after every step it does not decide next, the log entries that step added as its seat
sees them, and the clocks; its answers to them are ignored, never a fault, and a bot slow
to answer them holds nothing up."""

from __future__ import annotations

import time

from referee.match.botclient import UPDATE_DEADLINE_MS
from referee.match.clock import TimeControl
from referee.match.runner import FailurePolicy, PushSeat, run_match
from tests.support.botserver import DEAF_UPDATE_S
from tests.support.updates import expected_updates


def play(bot_server, paths: list[str], listening: list[bool], match_id: str,
         time_control: TimeControl | None = None, game: str = "aladino") -> dict:
    seats = [PushSeat(bot_server.url(path), 5000, name=f"seat{n}", updates=wants)
             for n, (path, wants) in enumerate(zip(paths, listening, strict=True))]
    return run_match(game, 11, {}, seats, FailurePolicy(), match_id,
                     time_control=time_control)


def updates_of(bot_server, path: str, match_id: str, seat: int) -> list[dict]:
    return [update for update in bot_server.updates[path]
            if update["match_id"] == match_id and update["seat"] == seat]


def test_a_bot_with_updates_hears_every_step_it_does_not_decide_next_as_its_seat_sees_it(
        bot_server):
    """Three seats of Aladino; seats 0 and 1 asked for updates, seat 2 did not. Hidden
    cards stay hidden: each update is the seat's own view of the entries a step added.
    Bots that answer updates at once miss none, in order."""
    record = play(bot_server, ["/random"] * 3, [True, True, False], "m-updates-3",
                  TimeControl(60_000, 100))
    assert all(step["fault"] is None for step in record["steps"])
    assert updates_of(bot_server, "/random", "m-updates-3", 2) == []
    for seat in (0, 1):
        wanted = expected_updates(record, seat)
        assert wanted, "the other seats moved between this seat's decisions"
        assert updates_of(bot_server, "/random", "m-updates-3", seat) == wanted


def test_an_update_without_a_time_control_has_a_null_clock(bot_server):
    record = play(bot_server, ["/random"] * 2, [True, True], "m-updates-noclock")
    wanted = expected_updates(record, 0)
    got = updates_of(bot_server, "/random", "m-updates-noclock", 0)
    assert got and all(update["clock"] is None for update in got)
    assert got == wanted


def test_a_bot_answering_updates_badly_or_never_is_no_fault_and_holds_nothing_up(bot_server):
    """`/badupdates` answers them with a 500 and junk, `/deafupdates` only after 3 s: the
    match plays on at the pace of the decisions, each seat charged its decisions only."""
    started = time.monotonic()
    record = play(bot_server, ["/deafupdates", "/badupdates", "/random"], [True] * 3,
                  "m-updates-rude", TimeControl(60_000, 0))
    took = time.monotonic() - started
    assert all(step["fault"] is None for step in record["steps"])
    steps = len(record["steps"])
    deaf_updates = len(expected_updates(record, 0))
    assert deaf_updates > 10
    # Answered at once, each update would cost its 3 s if the match waited for it:
    assert took < deaf_updates * DEAF_UPDATE_S / 2, (took, steps)
    assert max(step["elapsed_ms"] for step in record["steps"]) < UPDATE_DEADLINE_MS
    assert updates_of(bot_server, "/badupdates", "m-updates-rude", 1)
