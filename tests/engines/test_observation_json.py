"""`ObservationWriter` (engines.observation_json): the JSON of `game.observation(state, seat)`
byte for byte, for every game, player count and rules version, every seat and the
spectator, whatever order the states come in: one after the other as a match plays them,
back to an earlier state, on a branch (a sibling action), from a state read back from JSON
(whose log entries are new objects), and for another match's state; and with the log from
any of its entries on (`log_from`: what a bot that keeps the log is sent)."""

from __future__ import annotations

import random

import orjson
import pytest

import engines
from engines.observation_json import ObservationWriter

SETUPS = [(game, version, variant) for game in engines.names()
          for version in engines.versions(game)
          for variant in engines.get(game, version).variants()]
GAMES = 6


def expected(game: engines.Game, state: dict, seat: int | None) -> tuple[bytes, list]:
    observation = game.observation(state, seat)
    return orjson.dumps(observation), observation["legal_actions"]


def check(writer: ObservationWriter, state: dict, seat: int | None) -> None:
    written = writer.write(state, seat)
    json, legal = expected(writer.game, state, seat)
    assert written.observation == json
    assert written.legal_actions == legal
    assert written.legal_actions_json == orjson.dumps(legal)
    check_log_from(writer, state, seat)


def check_log_from(writer: ObservationWriter, state: dict, seat: int | None) -> None:
    """The log from its first, second, middle, last entry on, and past its end."""
    observation = writer.game.observation(state, seat)
    size = len(observation["log"])
    for first in sorted({1, size // 2, size - 1, size, size + 1} - {0, -1}):
        cut = orjson.dumps({**observation, "log": observation["log"][first:]})
        assert writer.write(state, seat, log_from=first).observation == cut


def setup_id(setup: tuple[str, str, dict]) -> str:
    name, version, variant = setup
    return "-".join([name, version, f"{variant['num_players']}p", *variant["options"].values()])


@pytest.mark.parametrize(("name", "version", "variant"), SETUPS, ids=map(setup_id, SETUPS))
def test_every_state_of_random_games_is_written_as_orjson_writes_the_observation(
        name: str, version: str, variant: dict) -> None:
    game = engines.get(name, version)
    for seed in range(GAMES):
        rng = random.Random(seed)
        state = game.new_game(variant["num_players"], seed, variant["options"])
        writer = ObservationWriter(game)
        earlier = state
        while game.current_seat(state) is not None:
            for seat in [None, *range(game.seats(state))]:
                check(writer, state, seat)
            legal = game.legal_actions(state)
            if rng.random() < 0.1:  # a branch, then back to an earlier state
                check(writer, game.apply(state, rng.choice(legal)), game.current_seat(state))
                check(writer, earlier, game.current_seat(earlier))
                earlier = state
            state = game.apply(state, rng.choice(legal))
        for seat in [None, *range(game.seats(state))]:
            check(writer, state, seat)
            check(writer, game.from_json(orjson.loads(orjson.dumps(state))), seat)


def test_a_log_that_does_not_extend_the_last_one_is_written_afresh() -> None:
    game = engines.get("caravans")
    late = game.new_game(2, 1)
    for _ in range(12):
        late = game.apply(late, game.legal_actions(late)[0])
    writer = ObservationWriter(game)
    for state in (late, game.new_game(2, 2), late, game.new_game(2, 1)):
        check(writer, state, 0)
