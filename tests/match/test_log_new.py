"""The log since the last decision (docs/bots.md, "The log since your last decision"): a
bot whose answer says `"log": "new"` keeps its observation's log, so its next decision
request carries only the entries added since (from `log_from` on); put back together, each
observation is the engine's own for the seat (design.md section 4: the observation holds
"the log of public events since the start"). A bot that does not ask, or whose last answer
was a fault, gets the whole log."""

from __future__ import annotations

import itertools

import engines
from referee.match.rerun import state_before
from referee.match.runner import FailurePolicy, PushSeat, run_match


def play(bot_server, paths: list[str], match_id: str, game: str = "aladino",
         policy: FailurePolicy | None = None) -> dict:
    seats = [PushSeat(bot_server.url(path), 5000, name=f"seat{n}")
             for n, path in enumerate(paths)]
    return run_match(game, 5, {}, seats, policy or FailurePolicy(), match_id)


def requests_of(bot_server, path: str, match_id: str, seat: int) -> list[dict]:
    return [request for request in bot_server.received[path]
            if request["match_id"] == match_id and request["seat"] == seat]


def check_rebuilt(record: dict, requests: list[dict]) -> list[int | None]:
    """Put each request's log back together as the SDK does (the entries before `log_from`
    from the requests before it), check the observation is the engine's for that step,
    and give each request's `log_from`."""
    engine = engines.get(record["game"], record["game_version"])
    log: list = []
    for request in requests:
        start = request.get("log_from", 0)
        assert start <= len(log)
        log = log[:start] + request["observation"]["log"]
        state = state_before(engine, record, request["step"])
        assert {**request["observation"], "log": log} == engine.observation(
            state, request["seat"])
    return [request.get("log_from") for request in requests]


def test_a_bot_asking_for_new_entries_gets_them_and_the_whole_observation_adds_up(
        bot_server):
    """Three seats of Aladino: seats 0 and 2 ask for the new entries, seat 1 does not."""
    record = play(bot_server, ["/lognew", "/random", "/lognew"], "m-lognew-3")
    assert record["result"] is not None and not record["forfeit"]
    for seat in (0, 2):
        requests = requests_of(bot_server, "/lognew", "m-lognew-3", seat)
        starts = check_rebuilt(record, requests)
        assert starts[0] is None  # the first request of a match: the whole log
        assert all(start is not None and start > 0 for start in starts[1:])
        # each request's log starts where the one before ended
        for before, after in itertools.pairwise(requests):
            assert after["log_from"] == (before.get("log_from", 0)
                                         + len(before["observation"]["log"]))
    whole = requests_of(bot_server, "/random", "m-lognew-3", 1)
    assert len(whole) > 5 and check_rebuilt(record, whole) == [None] * len(whole)


def test_after_a_fault_the_next_request_carries_the_whole_log_again(bot_server):
    """Under the `random` policy a malformed answer (no action) is a strike: whatever it
    said of the log, the request may not have been read, so the next one is whole."""
    policy = FailurePolicy(malformed="random", strike_limit=None)
    record = play(bot_server, ["/lognewfaulty", "/lognew"], "m-lognew-fault", "aldabas",
                  policy)
    faulted = {step["step"] for step in record["steps"] if step["fault"] is not None}
    assert faulted and all(step % 3 == 0 for step in faulted)
    requests = requests_of(bot_server, "/lognewfaulty", "m-lognew-fault", 0)
    starts = check_rebuilt(record, requests)
    for before, start in zip(requests, starts[1:], strict=False):  # each but the last
        assert (start is None) == (before["step"] in faulted), (before["step"], start)
