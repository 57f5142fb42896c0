"""A match keeps the rules version it was started under: it is played, stored, read back and
verified with that version's engine (`engines.get(game, version)`), after the engines moved
on (issue 24: "bump each engine's version; old replays still verify")."""

from __future__ import annotations

import random

import pytest

import engines
from referee.match import compact, rerun
from referee.match.botclient import BotReply
from referee.match.runner import FailurePolicy, MatchPlay
from referee.match.sealing import Sealer, Verifier
from referee.match.verify import UnsupportedReplay, verify

SETUPS = [("aladino", {}, 2), ("aldabas", {"mode": "multi"}, 3), ("caravans", {}, 2)]


def earlier_version(game: str) -> str:
    versions = engines.versions(game)
    assert len(versions) > 1 and versions[-1] == engines.get(game).version
    return versions[0]


def played(game: str, options: dict, players: int, version: str | None) -> dict:
    """A whole match of random moves under `version`, as the driver plays one."""
    seats = [{"kind": "bot", "bot_id": f"b{n}", "name": f"b{n}", "deadline_ms": 100}
             for n in range(players)]
    play = MatchPlay.start(game, 5, options, seats, FailurePolicy.uniform("forfeit"),
                           f"m-{game}", version=version)
    chooser = random.Random(5)
    while (seat := play.to_move) is not None:
        legal = play.engine.legal_actions(play.state)
        play.advance(seat, BotReply(chooser.choice(legal), None, "", 1.0), legal)
    return play.finish(Sealer.hmac("k"))


@pytest.mark.parametrize(("game", "options", "players"), SETUPS)
def test_a_match_of_an_earlier_version_is_played_stored_and_verified_under_it(game, options,
                                                                              players):
    version = earlier_version(game)
    record = played(game, options, players, version)
    assert record["game_version"] == version
    decoded = compact.decode(compact.encode(record))  # every state hash made by that version
    assert decoded == {**record, "steps": rerun.with_state_hashes(engines.get(game, version),
                                                                  record)}
    keys = Verifier.of(hmac_secrets=["k"])
    assert verify(record, keys).valid and verify(decoded, keys).valid
    current = compact.decode(compact.encode(played(game, options, players, None)))
    assert current["game_version"] == engines.get(game).version
    assert [s["action"] for s in current["steps"]] == [s["action"] for s in record["steps"]]
    assert [s["state_hash"] for s in current["steps"]] != [s["state_hash"] for s in
                                                           decoded["steps"]]


def test_a_version_this_referee_does_not_have_is_refused_by_name():
    record = played("aladino", {}, 2, None)
    with pytest.raises(rerun.RecordError, match="9.9.9"):
        rerun.engine_for({**record, "game_version": "9.9.9"})
    with pytest.raises(UnsupportedReplay, match="verify it with a referee of that version"):
        verify({**record, "game_version": "9.9.9"})
    with pytest.raises(compact.StoredReplayError, match="9.9.9"):
        compact.decode(compact.encode({**record, "game_version": "9.9.9"}))
