"""A finished record's decisions as export records (issue 30, `referee.match.decisions`):
each observation is the engine's view for the seat to move, written byte for byte as orjson
writes it, in every game, player count and rules version; faults, forfeits and pull seats
are recorded as they happened."""

from __future__ import annotations

import orjson
import pytest

import engines
from referee.match.decisions import FIELDS, MatchRecords, decisions, seat_mask
from referee.match.runner import FailurePolicy
from tests.support.decision_records import bot_seat, malformed_at, play, silent_at

SETUPS = [(game, version, variant) for game in engines.names()
          for version in engines.versions(game)
          for variant in engines.get(game, version).variants()]


def states_before_steps(record: dict) -> list[dict]:
    engine = engines.get(record["game"], record["game_version"])
    state = engine.new_game(record["num_players"], record["seed"], record["options"])
    states = []
    for step in record["steps"]:
        states.append(state)
        if step["action"] is not None:
            state = engine.apply(state, step["action"])
    return states


@pytest.mark.parametrize(("game", "version", "variant"), SETUPS,
                         ids=[f"{g}-{v}-{s['num_players']}p" for g, v, s in SETUPS])
def test_each_decision_is_what_the_seat_to_move_was_sent(game, version, variant):
    engine = engines.get(game, version)
    seats = [bot_seat(f"bot-{n}", version=n + 1) for n in range(variant["num_players"])]
    record = play(game, 7, seats, "m-view", options=variant["options"], version=version)
    found = list(decisions(record))
    assert [d.step for d in found] == [step["step"] for step in record["steps"]]
    for decision, step, state in zip(found, record["steps"], states_before_steps(record),
                                     strict=True):
        view = engine.observation(state, step["seat"])
        assert decision.seat == step["seat"] == engine.current_seat(state)
        assert decision.observation == orjson.dumps(view)
        assert orjson.loads(decision.legal_actions) == engine.legal_actions(state)
        assert decision.action == step["action"] and decision.fault is None


def test_a_mask_and_a_start_step_keep_those_decisions_only():
    seats = [bot_seat("a"), bot_seat("b"), bot_seat("c")]
    record = play("caravans", 3, seats, "m-mask")
    every = list(decisions(record))
    some = list(decisions(record, seat_mask([0, 2]), start=9))
    assert some == [d for d in every if d.seat in (0, 2) and d.step >= 9]
    assert list(decisions(record, seat_mask([1]), start=len(record["steps"]))) == []


def test_a_record_line_carries_the_match_the_seat_and_its_outcome():
    record = play("aladino", 11, [bot_seat("bot-a", 3), bot_seat(None)], "m-line",
                  finished_at="2026-03-04T05:06:07.000Z")
    head = MatchRecords.of(record)
    for decision in decisions(record):
        line = head.line(decision)
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        parsed = orjson.loads(line)
        assert list(parsed) == list(FIELDS)
        seat = decision.seat
        assert parsed["bot_id"] == ("bot-a" if seat == 0 else None)
        assert parsed["bot_version"] == (3 if seat == 0 else None)  # a pull seat has none
        assert parsed["rank"] == record["result"]["ranks"][seat]
        assert parsed["score"] == record["result"]["scores"][seat]
        assert parsed["finished_at"] == "2026-03-04T05:06:07.000Z"
        assert (parsed["match_id"], parsed["game"], parsed["game_version"],
                parsed["num_players"]) == ("m-line", "aladino", record["game_version"], 2)
        assert orjson.dumps(parsed["observation"]) == decision.observation
        assert orjson.dumps(parsed, option=orjson.OPT_APPEND_NEWLINE) == line  # as orjson
    assert b"".join(head.line_parts(decisions(record))) == b"".join(
        map(head.line, decisions(record)))


def test_a_substituted_move_and_a_forfeit_say_so():
    substituted = play("aldabas", 5, [bot_seat("a"), bot_seat("b")], "m-random",
                       policy=FailurePolicy.uniform("random"), choose=malformed_at({4}))
    decision = list(decisions(substituted))[4]
    assert decision.fault == "malformed"
    assert decision.action == substituted["steps"][4]["action"] is not None

    forfeited = play("aldabas", 5, [bot_seat("a"), bot_seat("b")], "m-forfeit",
                     choose=silent_at(6))
    last = list(decisions(forfeited))[-1]
    assert (last.step, last.action, last.fault) == (6, None, "timeout")
    fields = orjson.loads(MatchRecords.of(forfeited).line(last))
    assert (fields["rank"], fields["score"]) == (2, 0)  # the forfeiter ranks last


