"""`referee.api.web.dumper`: the same answer as marshmallow's `dump` for what the views reply
with (unknown keys dropped, nested schemas and lists, fields with their own serializer such
as a bot URL shown without credentials, absent optional fields left out)."""

from __future__ import annotations

import random

import pytest

from referee.api import bots, matches, ratings, replays
from referee.api.web import dumper, shared
from referee.match.botclient import BotReply
from referee.match.runner import FailurePolicy, run_match
from referee.match.sealing import Sealer


class FaultySeat:
    """Answers at random, and with nothing (a crash) every third decision."""

    deadline_ms = 500

    def __init__(self, seed: int):
        self.chooser = random.Random(seed)
        self.asked = 0

    def info(self) -> dict:
        return {"kind": "bot", "bot_id": "bot-x", "name": "x", "deadline_ms": 500}

    async def decide(self, payload: dict) -> BotReply:
        self.asked += 1
        if self.asked % 3 == 0:
            return BotReply(None, "crash", "oops", 1.5, "connection error")
        return BotReply(self.chooser.choice(payload["legal_actions"]), None, "", 0.7)

    async def aclose(self) -> None:
        """Nothing to release."""


def match_dict(**changes) -> dict:
    seats = [{"seat": 0, "kind": "bot", "bot_id": "bot-a", "name": "a"},
             {"seat": 1, "kind": "pull", "bot_id": None, "name": "p", "deadline_ms": 9000}]
    return {"id": "m-1", "game": "aladino", "game_version": "1.0.0", "num_players": 2,
            "seats": seats, "options": {}, "seed": 5, "policy": FailurePolicy().to_dict(),
            "deadline_ms": 2000, "pull_deadline_ms": 300000, "created_at": "2026-01-01T00:00Z",
            "status": "finished", "step": 12, "to_move": None,
            "result": {"scores": [1, 0.5], "ranks": [1, 2], "details": {"x": [1]}},
            "forfeit": {"seat": 1, "step": 11, "fault": "timeout"}, "error": None,
            "started_at": "2026-01-01T00:00Z", "finished_at": "2026-01-01T00:01Z",
            "tournament_id": "t-1", "deal_siblings": ["m-2"], "archive": "x", **changes}


RECORD = run_match("aladino", 3, {}, [FaultySeat(1), FaultySeat(2)],
                   FailurePolicy.uniform("random"), "m-r", sealer=Sealer.hmac("s"))


@pytest.mark.parametrize(("schema", "value"), [
    (matches.MatchSchema, match_dict()),
    (matches.MatchSchema, match_dict(status="running", result=None, forfeit=None,
                                     finished_at=None, seed=None)),
    (matches.MatchListSchema, {"matches": [match_dict(), match_dict(id="m-2")], "total": 9,
                               "offset": 0, "limit": 2, "game": "aladino"}),
    (bots.BotListSchema, {"bots": [{"id": "bot-a", "name": "a", "games": ["aladino"],
                                       "url": "http://user:pw@127.0.0.1:9/x",
                                       "created_at": "t", "retired_at": None,
                                       "secret": "never shown"}],
                             "total": 1, "offset": 0, "limit": 50}),
    (replays.ReplaySchema, RECORD),
    (ratings.RatingHistorySchema, {"game": "aladino", "bot_id": "bot-a", "total": 2,
                                   "offset": 0, "limit": 2, "history": [[1, 1516.0],
                                                                        [2, 1500.25]]}),
])
def test_the_dumper_answers_what_marshmallow_does(schema, value):
    assert dumper(schema)(value) == shared(schema).dump(value)
    assert list(dumper(schema)(value)) == list(shared(schema).dump(value))  # key order too


def test_the_record_has_faults_to_compare():
    assert any(step["fault"] for step in RECORD["steps"])
