"""The spectator's view that the step views serve (referee/match/step_views.py: the engine's
`observation(state, None)`) holds nothing that any seat may not see: it is the same over
every state that differs only in some seat's secrets."""

from __future__ import annotations

import random

import pytest

import engines
from engines.rng import Rng

VARIANTS = [(name, variant) for name in engines.names()
            for variant in engines.get(name).variants()]


def sampled_states(engine: engines.Game, variant: dict, seed: int, every: int = 15):
    state = engine.new_game(variant["num_players"], seed, variant["options"])
    chooser = random.Random(seed)
    step = 0
    while not engine.is_over(state):
        if step % every == 0:
            yield state
        state = engine.apply(state, chooser.choice(engine.legal_actions(state)))
        step += 1
    yield state


@pytest.mark.parametrize("game, variant", VARIANTS,
                         ids=[f"{g}-{v['num_players']}p-{v['options']}" for g, v in VARIANTS])
def test_the_spectator_view_ignores_every_secret(game, variant):
    engine = engines.get(game)
    for seed in (1,):
        for state in sampled_states(engine, variant, seed):
            view = engine.observation(state, None)
            assert view["seat"] is None and view["legal_actions"] == []
            assert view["to_move"] == engine.current_seat(state)
            for seat in range(engine.seats(state)):
                hidden = engine.hidden_variant(state, seat, Rng(seed * 31 + seat))
                assert engine.observation(hidden, None) == view
