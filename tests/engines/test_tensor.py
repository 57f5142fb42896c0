"""Each game's observation tensor (engines.tensor, issue 30): one layout in every setup,
every entry within its bounds, and it shows nothing the observation hides."""

from __future__ import annotations

import random

import numpy as np
import pytest

import engines
from engines import tensor
from engines.rng import Rng

GAMES = 6
SIZES = {"aladino": 1363, "aldabas": 2287, "caravans": 657}
SETUPS = [pytest.param(name, variant, id=f"{name}-{variant['num_players']}p-"
                       f"{variant['options'].get('mode', '')}".rstrip("-"))
          for name in engines.names() for variant in engines.get(name).variants()]


def _states(game, variant, seed):
    state = game.new_game(variant["num_players"], seed, variant["options"])
    chooser = random.Random(seed)
    while True:
        yield state
        if game.is_over(state):
            return
        state = game.apply(state, chooser.choice(game.legal_actions(state)))


@pytest.mark.parametrize(("name", "variant"), SETUPS)
def test_every_observation_fits_the_layout_and_its_bounds(name, variant):
    game, encoder = engines.get(name), tensor.of(name)
    assert encoder.size == SIZES[name] == len(encoder.low) == len(encoder.high)
    assert (encoder.low < encoder.high).all()
    for seed in range(GAMES):
        for state in _states(game, variant, seed):
            for seat in [*range(game.seats(state)), None]:
                vector = encoder.encode(game.observation(state, seat))
                assert vector.dtype == np.float32 and vector.shape == (encoder.size,)
                assert (encoder.low <= vector).all() and (vector <= encoder.high).all()


@pytest.mark.parametrize(("name", "variant"), SETUPS)
def test_the_tensor_hides_what_the_observation_hides(name, variant):
    """A state that differs only in what the seat may not see gives the same tensor, and
    the seats' own tensors differ (each sees itself first)."""
    game, encoder = engines.get(name), tensor.of(name)
    for state in list(_states(game, variant, seed=3))[::7]:
        for seat in range(game.seats(state)):
            variant_state = game.hidden_variant(state, seat, Rng(seat + 1))
            assert (encoder.encode(game.observation(state, seat))
                    == encoder.encode(game.observation(variant_state, seat))).all()


def test_the_tensor_changes_with_what_the_seat_sees():
    game, encoder = engines.get("caravans"), tensor.of("caravans")
    state = game.new_game(3, seed=1)
    vectors = [encoder.encode(game.observation(state, seat)) for seat in range(3)]
    assert not (vectors[0] == vectors[1]).all()  # another hand, the seats counted from it
    after = game.apply(state, game.legal_actions(state)[0])
    assert not (encoder.encode(game.observation(after, 0)) == vectors[0]).all()
