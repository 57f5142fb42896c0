"""The leaderboard's answer is kept in Redis (tournament.tournaments.leaderboard_page) and
must never be served stale: a counted rated match or new tournament intervals change it."""

from __future__ import annotations

import orjson
from apitest import store_finished

from referee.replay import utc_now
from tournament import results
from tournament.store import Store, dumps, ratings_key
from tournament.tournaments import leaderboard, leaderboard_page

GAME = "aladino"


def finished_match(store: Store, redis_url: str, match_id: str, winner: str, loser: str
                   ) -> None:
    """A finished, counted two-bot match, stored as a driver stores one."""
    seats = [{"seat": seat, "kind": "bot", "bot_id": bot, "name": bot}
             for seat, bot in enumerate((winner, loser))]
    store.create_match({"id": match_id, "game": GAME, "num_players": 2, "seats": seats,
                        "options": {}, "seed": 1}, {}, 0, {})
    record = {"game": GAME, "seats": seats, "steps": [], "started_at": utc_now(),
              "result": {"scores": [1, 0], "ranks": [1, 2], "details": {}},
              "forfeit": None, "finished_at": utc_now()}
    store_finished(redis_url, match_id, record)
    assert results.count_finished(store, match_id)


class Renderer:
    """Renders like the API does, counting how often it is asked to."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, board: dict) -> bytes:
        self.calls += 1
        return orjson.dumps(board)


def test_the_page_is_kept_until_a_rated_match_is_counted(redis_url: str) -> None:
    store = Store.from_url(redis_url)
    for bot in ("bot-a", "bot-b"):
        store.save_bot({"id": bot, "name": bot.upper(), "url": "http://127.0.0.1:9/",
                        "games": [GAME]})
    finished_match(store, redis_url, "m-1", "bot-a", "bot-b")
    render = Renderer()
    first = leaderboard_page(store, GAME, render)
    assert leaderboard_page(store, GAME, render) == first
    assert render.calls == 1
    finished_match(store, redis_url, "m-2", "bot-b", "bot-a")
    second = leaderboard_page(store, GAME, render)
    assert render.calls == 2
    assert orjson.loads(second) == leaderboard(store, GAME)
    assert len(orjson.loads(second)["history"]["bot-a"]) == 2


def test_new_tournament_intervals_change_the_page(redis_url: str) -> None:
    store = Store.from_url(redis_url)
    for bot in ("bot-a", "bot-b"):
        store.save_bot({"id": bot, "name": bot, "url": "http://127.0.0.1:9/",
                        "games": [GAME]})
    finished_match(store, redis_url, "m-1", "bot-a", "bot-b")
    render = Renderer()
    assert orjson.loads(leaderboard_page(store, GAME, render))["leaderboard"][0]["low"] is None
    store.redis.hset(ratings_key(GAME, "intervals"), "bot-a",
                     dumps({"rating": 1500.0, "low": 1400.0, "high": 1600.0}))
    row = orjson.loads(leaderboard_page(store, GAME, render))["leaderboard"][0]
    assert render.calls == 2
    assert row["bot_id"] == "bot-a"
    assert row["high"] - row["low"] == 200.0
