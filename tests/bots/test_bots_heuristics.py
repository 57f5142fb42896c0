"""Every game's heuristic bot beats the random bot (in-process arena, seeded matches).

The issue's bar is more than 70% of 2-player games over at least 200 (docs/bots.md has
those figures); the test plays fewer, seeded, and holds them to the same bar."""

import statistics

import pytest

import engines
from bots.python.arena import bot_factory, duel, solo_scores

GAMES = 40


@pytest.mark.parametrize("game", engines.names())
def test_heuristic_bot_beats_random_in_two_player_games(game):
    tally = duel(engines.get(game), bot_factory(f"{game}_bot"), bot_factory("random_bot"),
                 games=GAMES, first_seed=1000)
    assert tally.win_rate > 0.7, tally.summary()


def test_aldabas_heuristic_bot_scores_more_than_random_in_solo():
    """Solidad has one seat: the heuristic must average a higher score than random."""
    engine, options = engines.get("aldabas"), {"mode": "solo"}
    heuristic = solo_scores(engine, bot_factory("aldabas_bot"), GAMES, 1000, options)
    chance = solo_scores(engine, bot_factory("random_bot"), GAMES, 1000, options)
    assert statistics.fmean(heuristic) > statistics.fmean(chance), (heuristic, chance)
