"""1,000 random games per configuration finish without an exception and give a result."""

import random

import pytest

from tests.engines.aldabas.aldabas_helpers import GAME

GAMES = 1000
MAX_STEPS = 3000


def random_game(variant: dict, seed: int) -> dict:
    chooser = random.Random(seed)
    state = GAME.new_game(variant["num_players"], seed, variant["options"])
    for _ in range(MAX_STEPS):
        if GAME.is_over(state):
            return state
        state = GAME.apply(state, chooser.choice(GAME.legal_actions(state)))
    pytest.fail(f"game {seed} of {variant} did not end in {MAX_STEPS} steps")


@pytest.mark.parametrize("variant", GAME.variants(),
                         ids=lambda v: f"{v['options']['mode']}-{v['num_players']}p")
def test_a_thousand_random_games_finish(variant):
    reasons = set()
    for seed in range(GAMES):
        final = random_game(variant, seed)
        result = GAME.result(final)
        assert len(result["scores"]) == variant["num_players"]
        assert result["scores"] == [p["total"] for p in result["details"]["players"]]
        if variant["options"]["mode"] == "solo":
            assert result["details"]["band"] and result["scores"][0] >= 0
        reasons.add(final["end"]["reason"])
    assert reasons <= {"supply_empty", "block_full", "deck_exhausted"}
