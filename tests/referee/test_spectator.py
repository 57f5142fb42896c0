"""The spectator's view holds nothing that any seat may not see."""

from __future__ import annotations

import random

import pytest

import engines
from engines.rng import Rng
from referee.spectator import spectator_view

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


def contained(part, whole) -> bool:
    """`part` is `whole` with some dict keys left out (recursively)."""
    if isinstance(part, dict) and isinstance(whole, dict):
        return all(k in whole and contained(v, whole[k]) for k, v in part.items())
    if isinstance(part, list) and isinstance(whole, list) and len(part) == len(whole):
        return all(contained(p, w) for p, w in zip(part, whole, strict=True))
    return part == whole


@pytest.mark.parametrize("game, variant", VARIANTS,
                         ids=[f"{g}-{v['num_players']}p-{v['options']}" for g, v in VARIANTS])
def test_the_spectator_view_ignores_every_secret(game, variant):
    engine = engines.get(game)
    for seed in (1,):
        for state in sampled_states(engine, variant, seed):
            view = spectator_view(engine, state)
            assert view["seat"] is None and view["legal_actions"] == []
            assert view["to_move"] == engine.current_seat(state)
            for seat in range(engine.seats(state)):
                public = {k: v for k, v in view.items() if k not in ("seat", "legal_actions")}
                assert contained(public, engine.observation(state, seat))
                hidden = engine.hidden_variant(state, seat, Rng(seed * 31 + seat))
                assert spectator_view(engine, hidden) == view
