"""The games as PettingZoo AEC environments (engines.pettingzoo, issue 30): PettingZoo's own
API and seed tests in every setup, the deal and the rewards of the engines, masks over the
action index space, and the quick start of docs/bots.md."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import engines
import engines.pettingzoo
from engines import action_space, rewards, tensor
from tests.support.docs import python_block, run

SETUPS = [pytest.param(name, variant, id=f"{name}-{variant['num_players']}p-"
                       f"{variant['options'].get('mode', '')}".rstrip("-"))
          for name in engines.names() for variant in engines.get(name).variants()]
DICT_OBSERVATIONS = [
    # PettingZoo warns of every dict observation but its own games' (it lists them by name)
    "ignore:Observation is not a NumPy array",
    "ignore:Observation space for each agent probably should be",
]


def _env(name, variant):
    return engines.pettingzoo.env(name, num_players=variant["num_players"],
                                  **variant["options"])


@pytest.mark.filterwarnings(*DICT_OBSERVATIONS)
@pytest.mark.parametrize(("name", "variant"), SETUPS)
def test_pettingzoo_api_test(name, variant):
    api_test(_env(name, variant), num_cycles=1000)


@pytest.mark.parametrize(("name", "variant"), SETUPS)
def test_pettingzoo_seed_test(name, variant):
    seed_test(lambda: _env(name, variant))


@pytest.mark.parametrize(("name", "variant"), SETUPS)
def test_a_game_deals_as_new_game_and_pays_the_rewards(name, variant):
    env, game = _env(name, variant), engines.get(name)
    env.reset(seed=9)
    assert env.engine_state == game.new_game(variant["num_players"], 9, variant["options"])
    space, encoder = action_space.of(name), tensor.of(name)
    rng, final = np.random.default_rng(9), {}
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        seat = env.possible_agents.index(agent)
        assert (observation["observation"]
                == encoder.encode(game.observation(env.engine_state, seat))).all()
        if termination:
            final[seat] = reward
            env.step(None)
            continue
        assert game.current_seat(env.engine_state) == seat and not truncation
        mask = observation["action_mask"]
        assert sorted(np.flatnonzero(mask)) == sorted(
            space.indices(game.legal_actions(env.engine_state)))
        others = [a for a in env.agents if a != agent]
        assert not any(env.observe(other)["action_mask"].any() for other in others)
        env.step(int(rng.choice(np.flatnonzero(mask))))
    expected = rewards.rewards(game, env.engine_state)
    assert [final[seat] for seat in range(len(expected))] == expected


def test_an_unseeded_reset_continues_the_seeded_series():
    first, second = engines.pettingzoo.env("caravans"), engines.pettingzoo.env("caravans")
    first.reset(seed=3)
    second.reset(seed=3)
    first.reset()
    second.reset()
    assert first.engine_state == second.engine_state
    assert first.engine_state["seed"] != 3


def test_a_move_outside_the_mask_is_refused():
    env = engines.pettingzoo.env("aladino", num_players=2)
    env.reset(seed=1)
    mask = env.observe(env.agent_selection)["action_mask"]
    with pytest.raises(engines.IllegalAction):
        env.step(int(np.flatnonzero(mask == 0)[0]))
    with pytest.raises(engines.IllegalAction):
        env.step(None)


def test_solo_has_one_agent():
    env = engines.pettingzoo.env("aldabas", num_players=1, mode="solo")
    env.reset(seed=0)
    assert env.possible_agents == ["player_0"]
    with pytest.raises(engines.InvalidSetup):
        engines.pettingzoo.env("aldabas", num_players=2, mode="solo")


def test_the_documented_pettingzoo_quick_start_runs(capsys):
    code = python_block("## OpenSpiel and PettingZoo: quick starts", 1)
    assert "engines.pettingzoo.env" in code
    run(code)
    final = eval(capsys.readouterr().out)  # noqa: S307 - the printed rewards
    assert set(final) == {"player_0", "player_1", "player_2"}
    assert sum(final.values()) == pytest.approx(0)
