"""Property test (hypothesis): over random games of every game and mode, no observation —
event log included — depends on anything another seat keeps secret.

`Game.hidden_variant(state, seat, rng)` re-deals everything `seat` may not see (other hands,
the deck order, face-down tokens, the generator). If any observation of `seat`, at any depth,
carried another seat's secret, the two observations would differ.
"""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engines
from engines.rng import Rng

CONFIGS = [(name, variant) for name in engines.names()
           for variant in engines.get(name).variants()]


def _canon(value) -> str:
    return json.dumps(value, sort_keys=True)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    config=st.sampled_from(CONFIGS),
    seed=st.integers(min_value=0, max_value=2**63 - 1),
    choices=st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=300),
    resample=st.integers(min_value=0, max_value=2**64 - 1),
)
def test_no_observation_reveals_another_seats_secrets(config, seed, choices, resample):
    name, variant = config
    game = engines.get(name)
    state = game.new_game(variant["num_players"], seed, variant["options"])
    rng = Rng(resample)
    for choice in choices:
        spectator = _canon(game.observation(state, None))
        for seat in range(game.seats(state)):
            assert _canon(game.observation(game.hidden_variant(state, seat, rng), None)) == \
                spectator, f"{name}: the spectator sees a secret"
            seen = _canon(game.observation(state, seat))
            other = game.hidden_variant(state, seat, rng)
            assert _canon(game.observation(other, seat)) == seen, (
                f"{name}: seat {seat} sees something it may not"
            )
        if game.is_over(state):
            break
        actions = game.legal_actions(state)
        state = game.apply(state, actions[choice % len(actions)])
