"""GET /games and GET /games/{name}: every engine, each describing itself."""

from __future__ import annotations

import pytest

import engines


def test_games_list_every_engine(api):
    games = api.get("/games").get_json()["games"]
    assert [g["name"] for g in games] == engines.names()


@pytest.mark.parametrize("name", engines.names())
def test_a_game_describes_itself(api, name):
    engine = engines.get(name)
    body = api.get(f"/games/{name}").get_json()
    assert body["description"] == engine.describe()
    assert body["variants"] == engine.variants()
    assert (body["min_players"], body["max_players"]) == (engine.min_players, engine.max_players)
