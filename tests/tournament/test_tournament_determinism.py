"""The same tournament seed gives the same final ratings, whatever order the workers finish
the matches in: Bradley-Terry depends only on the results, never on their order."""

from __future__ import annotations

import redis

from tests.support.apitest import wait_finished
from tests.support.tournament_checks import start
from tournament.store import Store, loads, ratings_key


def counted_order(store: Store, tournament_id: str) -> list[int]:
    """The schedule index of each of the tournament's matches, in the order counted."""
    order = []
    for raw in store.redis.lrange(ratings_key("aladino", "results"), 0, -1):
        match = store.get_match(loads(raw)["match_id"])
        if match["tournament_id"] == tournament_id:
            order.append(match["tournament_index"])
    return order


def reverse_queue(client: redis.Redis, key: str) -> None:
    job_ids = client.lrange(key, 0, -1)
    with client.pipeline() as pipe:
        pipe.delete(key)
        pipe.rpush(key, *reversed(job_ids))
        pipe.execute()


def test_the_same_seed_gives_the_same_ratings_in_any_finishing_order(
        api, register_bots, workers, redis_url):
    store = Store.from_url(redis_url)
    bots = register_bots(4)
    first = start(api, "aladino", bots, 2, seed=2026)
    (only,) = workers.start(1, REFEREE_WORKER_CONCURRENCY="1")  # in schedule order
    first = wait_finished(api, first["id"])
    workers.kill(only)

    second = start(api, "aladino", bots, 2, seed=2026)
    reverse_queue(store.redis, store.queue().key)  # the last match is played first
    workers.start(2)
    second = wait_finished(api, second["id"])

    first_order, second_order = counted_order(store, first["id"]), counted_order(store,
                                                                                  second["id"])
    assert first_order == sorted(first_order) and sorted(second_order) == first_order
    assert second_order != first_order
    assert second["ratings"] == first["ratings"]
    assert second["standings"] == first["standings"]
    assert second["cross_table"] == first["cross_table"]
    ratings = {row["bot_id"]: row for row in second["ratings"]}
    assert all(row["low"] < row["rating"] < row["high"] for row in ratings.values())
    board = api.get("/ratings/aladino").get_json()
    for row in board["leaderboard"]:  # the interval of the latest tournament, on the live Elo
        bt = ratings[row["bot_id"]]
        assert abs((row["high"] - row["rating"]) - (bt["high"] - bt["rating"])) < 1e-5
        assert abs((row["rating"] - row["low"]) - (bt["rating"] - bt["low"])) < 1e-5
