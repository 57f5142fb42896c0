"""The games as OpenSpiel games (engines.openspiel, issue 30): OpenSpiel's own random
simulation test in every setup, explicit chance that is the engines' own, information
states that `resample_from_infostate` keeps, and the quick start of docs/bots.md."""

from __future__ import annotations

import random

import numpy as np
import pyspiel
import pytest

import engines
import engines.openspiel
from engines import action_space, rewards
from engines.openspiel import SEED_BYTES
from tests.support.docs import python_block, run

SETUPS = [pytest.param(name, variant, id=f"{name}-{variant['num_players']}p-"
                       f"{variant['options'].get('mode', '')}".rstrip("-"))
          for name in engines.names() for variant in engines.get(name).variants()]


def _load(name, variant):
    return pyspiel.load_game(f"python_{name}", {"players": variant["num_players"],
                                                **variant["options"]})


def _play(state, rng, until=None):
    """Random play (chance by its probabilities) until `until(state)` or the end."""
    while not state.is_terminal() and not (until and until(state)):
        if state.is_chance_node():
            outcomes, chances = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=chances)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def _moves(state, count):
    """`until` for `_play`: `count` more moves (chance's included)."""
    reached = len(state.history()) + count
    return lambda later: len(later.history()) >= reached


@pytest.mark.parametrize(("name", "variant"), SETUPS)
def test_openspiel_random_simulation_test(name, variant):
    pyspiel.random_sim_test(_load(name, variant), num_sims=20, serialize=False, verbose=False)


def test_every_game_is_registered_with_its_parameters():
    registered = {t.short_name: t for t in pyspiel.registered_games()}
    for name in engines.names():
        game_type = registered[f"python_{name}"]
        assert game_type.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
        assert game_type.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
        assert "players" in game_type.parameter_specification
    assert set(engines.openspiel.GAMES) == set(engines.names())
    assert registered["python_aldabas"].parameter_specification["mode"] == "multi"
    solo = pyspiel.load_game("python_aldabas", {"mode": "solo", "players": 1})
    assert solo.num_players() == 1
    assert solo.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM


@pytest.mark.parametrize("name", engines.names())
def test_the_seed_nodes_deal_as_new_game(name):
    game = pyspiel.load_game(f"python_{name}", {"players": 3})
    state = game.new_initial_state()
    for byte in (7, 1, 0, 0):
        assert state.is_chance_node()
        assert len(state.chance_outcomes()) == 256
        assert sum(p for _, p in state.chance_outcomes()) == pytest.approx(1)
        assert state.information_state_string(0) == state.information_state_string(1)
        state.apply_action(byte)
    assert state.engine_state == engines.get(name).new_game(3, seed=7 + 256)
    assert state.history() == [7, 1, 0, 0]


def test_the_aladino_die_is_a_chance_node_the_engine_obeys():
    game = pyspiel.load_game("python_aladino", {"players": 2})
    state, rolls = game.new_initial_state(), 0
    rng = np.random.RandomState(0)
    for byte in range(SEED_BYTES):
        state.apply_action(byte)
    while not state.is_terminal():
        if state.is_chance_node():
            assert state.chance_outcomes() == [(face, 0.25) for face in range(4)]
            face = int(rng.randint(4))
            state.apply_action(face)
            assert [e for e in state.engine_state["log"] if e["event"] == "roll"][-1][
                "value"] == face + 1
            rolls += 1
        else:
            before = len(state.engine_state["log"])
            state.apply_action(int(rng.choice(state.legal_actions())))
            rolled = any(e["event"] == "roll" for e in state.engine_state["log"][before:])
            assert not rolled  # the roll waits for its chance node
    assert rolls > 5


@pytest.mark.parametrize("name", sorted(set(engines.names())
                                        - set(engines.openspiel.IN_PLAY_CHANCE)))
def test_the_other_games_draw_nothing_after_the_deal(name):
    """Their whole chance is the seed's: another generator changes no move's outcome."""
    game = engines.get(name)
    for variant in game.variants():
        state = game.new_game(variant["num_players"], 11, variant["options"])
        chooser = random.Random(11)
        while not game.is_over(state):
            action = chooser.choice(game.legal_actions(state))
            after = game.apply(state, action)
            other = game.apply({**state, "rng": state["rng"] ^ 0x5DEECE66D}, action)
            assert {**other, "rng": after["rng"]} == after
            state = after


@pytest.mark.parametrize(("name", "variant"), SETUPS)
def test_resampled_states_keep_the_information_state(name, variant):
    game = _load(name, variant)
    rng, sampler = np.random.RandomState(5), pyspiel.UniformProbabilitySampler(5, 0.0, 1.0)
    state = _play(game.new_initial_state(), rng, until=lambda s: not s.is_chance_node())
    checked = 0
    while not state.is_terminal():
        if not state.is_chance_node():
            checked += 1
            player = state.current_player()
            for seat in {player, (player + 1) % game.num_players()}:
                resampled = state.resample_from_infostate(seat, sampler)
                assert (resampled.information_state_string(seat)
                        == state.information_state_string(seat))
                assert (resampled.observation_tensor(seat) == state.observation_tensor(seat))
                if seat == player:  # another seat's moves may hang on what it hides
                    assert resampled.legal_actions() == state.legal_actions()
            if checked % 5 == 1:
                _play(resampled.clone(), rng)  # a determinized state plays to its end
        _play(state, rng, until=_moves(state, 4))
    assert checked > 3


def test_a_resampled_state_draws_the_hidden_part_again():
    game = pyspiel.load_game("python_caravans", {"players": 2})
    state = _play(game.new_initial_state(), np.random.RandomState(1),
                  until=lambda s: len(s.history()) > SEED_BYTES + 6)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    hands = {str(state.resample_from_infostate(0, sampler).engine_state["hands"][1])
             for _ in range(8)}
    assert len(hands) > 1  # seat 1's hand is hidden from seat 0


@pytest.mark.parametrize(("name", "variant"), SETUPS)
def test_actions_are_the_index_space_and_returns_the_rewards(name, variant):
    game = _load(name, variant)
    space = action_space.of(name)
    assert game.num_distinct_actions() == len(space)
    state = game.new_initial_state()
    rng = np.random.RandomState(2)
    while not state.is_terminal():
        if not state.is_chance_node():
            legal = state.legal_actions()
            engine_legal = engines.get(name).legal_actions(state.engine_state)
            assert legal == sorted(space.index(action) for action in engine_legal)
            assert [state.action(a) for a in legal] == [space.action(a) for a in legal]
            assert state.action_to_string(legal[0]) in {
                state.action_to_string(a) for a in legal}
        _play(state, rng, until=_moves(state, 1))
    assert state.returns() == rewards.rewards(engines.get(name), state.engine_state)
    if game.num_players() > 1:
        assert sum(state.returns()) == pytest.approx(0)


def test_public_observers_see_the_spectators_view():
    game = pyspiel.load_game("python_caravans", {"players": 2})
    state = _play(game.new_initial_state(), np.random.RandomState(3),
                  until=lambda s: len(s.history()) > SEED_BYTES + 4)
    public = game.make_py_observer(pyspiel.IIGObservationType(
        perfect_recall=True, private_info=pyspiel.PrivateInfoType.NONE))
    seen = [public.string_from(state, seat) for seat in range(2)]
    assert seen[0] == seen[1] != state.information_state_string(0)
    assert '"hand":null' in seen[0]


def test_the_documented_openspiel_quick_start_runs(capsys):
    code = python_block("## OpenSpiel and PettingZoo: quick starts", 0)
    assert "pyspiel.load_game" in code
    run(code)
    returns = eval(capsys.readouterr().out)  # noqa: S307 - the printed returns
    assert sorted(returns) == [-1.0, 1.0] or returns == [0.0, 0.0]
