"""The searching bot of docs/bots.md ("Searching with the engines: determinize") runs as
printed: its code is read from the doc and asked real decisions of every game."""

from __future__ import annotations

import pytest

import engines
from tests.support.docs import run_python_block


def documented_choose():
    """The `choose` of the doc's first Python block after its heading."""
    return run_python_block("## Searching with the engines: `determinize`")["choose"]


@pytest.mark.parametrize("game_name", engines.names())
def test_the_documented_search_bot_answers_a_legal_action(game_name):
    game = engines.get(game_name)
    state = game.new_game(num_players=2, seed=5, options={})
    for _ in range(6):  # a few moves in: some of the game is hidden by now
        state = game.apply(state, game.legal_actions(state)[0])
    seat = game.current_seat(state)
    legal = game.legal_actions(state)
    action = documented_choose()(game.observation(state, seat), legal, playouts=12)
    assert action in legal
