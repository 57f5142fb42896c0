"""Caravans end of game and scoring; each test quotes the rulebook or rules/caravans.md."""

import random
import time

import pytest

from engines.caravans import flow
from tests.engines.caravans.caravans_helpers import GAME, act, action_phase, skip_setup

MAX_STEPS = 5000  # the conformance suite's cap


def test_the_game_ends_after_the_turn_in_which_the_deck_ran_out():
    """Rulebook: "The game end in one of two ways: The last commodity card is played"; rules:
    "The game ends after the action phase of the turn in which the deck ran out"."""
    state = action_phase(num_players=3, seat=0)
    state["deck"] = state["deck"][:3]
    state["actions"]["acted"] = True
    for _ in range(3):
        state = act(state, "end_actions")
    assert state["phase"] == "bidding" and state["final_turn"] and state["deck"] == []
    while state["phase"] == "bidding":
        state = act(state, "decline_auction")
    state["actions"]["acted"] = True
    for _ in range(3):
        assert not GAME.is_over(state)
        state = act(state, "end_actions")
    assert GAME.is_over(state) and state["end"]["reason"] == "deck_exhausted"
    assert GAME.result(state)["details"]["end"] == state["end"]
    assert state["end"]["seat"] is None and state["log"][-1] == {"event": "end", **state["end"]}


def test_seven_turns_exhaust_the_deck():
    """Rules: 10 cards per colour, 3 drawn by each player at the start, and "as many cards from
    the deck as there are players" revealed each turn."""
    state = skip_setup(GAME.new_game(num_players=4, seed=1, options={}))
    assert len(state["deck"]) == 28 - 4
    for _ in range(6):
        flow.start_turn(state)
    assert state["turn"] == 7 and state["final_turn"] and state["deck"] == []


def test_the_game_ends_when_nobody_takes_an_action():
    """Rulebook: "All players take no actions during the action phase."; a phase with one
    action goes on to the next turn."""
    state = action_phase(num_players=2, seat=1)
    state["gold"][1] = 6
    state["hands"][1] = []  # buying outright: no card matching either city
    state = act(state, "buy", route="red:ivory-metal")
    state = act(state, "end_actions")
    state = act(state, "end_actions")
    assert state["phase"] == "bidding" and state["turn"] == 2
    state = act(state, "decline_auction")
    state = act(state, "decline_auction")
    state = act(state, "end_actions")
    state = act(state, "end_actions")
    assert GAME.is_over(state) and state["end"]["reason"] == "no_actions"
    assert GAME.legal_actions(state) == [] and GAME.current_seat(state) is None


def _scored(control: dict, num_players: int = 4) -> dict:
    state = action_phase(num_players=num_players)
    state["control"] = control
    state["phase"] = "over"
    return GAME.result(state)


def test_the_scoring_example_metal_on_three_maps_gives_six_bonus_points():
    """Rulebook: "For each city a player controls, he/she receives one point. If a player
    controls a city type (i.e. ivory) on more than one map, they receive three bonus point for
    each extra city. Hence, if player controls metal on their map and two of their opponents
    maps, they will receive six bonus points.\""""
    result = _scored({"red.metal": 0, "blue.metal": 0, "green.metal": 0, "red.ivory": 0,
                      "yellow.silk": 1})
    zero = result["details"]["players"][0]
    assert zero["type_bonus"] == {"metal": 6} and zero["bonus_points"] == 6
    assert zero["city_points"] == 4 and zero["total"] == 10
    assert result["scores"] == [10, 1, 0, 0]
    assert result["ranks"] == [1, 2, 3, 3]


def test_ties_are_shared():
    """Rulebook: "The winner is the player with the most points"; rules: "a tie is shared"."""
    result = _scored({"red.gems": 0, "blue.silk": 1}, num_players=3)
    assert result["scores"] == [1, 1, 0] and result["ranks"] == [1, 1, 3]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_a_thousand_random_games_finish(num_players):
    """Issue 4 acceptance: "1,000 random games per player count finish without an exception and
    without hitting any step cap"."""
    started, longest = time.perf_counter(), 0
    for seed in range(1000):
        chooser = random.Random(seed)
        state = GAME.new_game(num_players=num_players, seed=seed, options={})
        for step in range(MAX_STEPS):
            if GAME.is_over(state):
                longest = max(longest, step)
                break
            state = GAME.apply(state, chooser.choice(GAME.legal_actions(state)))
        else:
            pytest.fail(f"seed {seed} did not finish in {MAX_STEPS} steps")
        assert len(GAME.result(state)["scores"]) == num_players
    print(f"{num_players} players: 1000 games in {time.perf_counter() - started:.1f} s, "
          f"longest {longest} steps")
