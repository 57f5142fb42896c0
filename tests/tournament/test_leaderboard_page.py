"""The leaderboard's rows are kept in Redis (tournament.tournaments.leaderboard_rows) and
must never be served stale: a counted rated match or new tournament intervals change them.
The leaderboard and the rating history are read a page at a time."""

from __future__ import annotations

import orjson

from referee.match.replay import FORMAT, utc_now
from tests.support.apitest import ADMIN, store_finished
from tournament import results, skill
from tournament.store import Store, dumps, ratings_key
from tournament.tournaments import leaderboard, leaderboard_rows

GAME = "aladino"


def finished_match(store: Store, redis_url: str, match_id: str, winner: str, loser: str
                   ) -> None:
    """A finished, counted two-bot match, stored as a driver stores one."""
    seats = [{"seat": seat, "kind": "bot", "bot_id": bot, "name": bot}
             for seat, bot in enumerate((winner, loser))]
    store.create_match({"id": match_id, "game": GAME, "num_players": 2, "seats": seats,
                        "options": {}, "seed": 1}, {}, 0, {})
    record = {"format": FORMAT, "game": GAME, "seats": seats, "steps": [], "started_at": utc_now(),
              "result": {"scores": [1, 0], "ranks": [1, 2], "details": {}},
              "forfeit": None, "finished_at": utc_now()}
    store_finished(redis_url, match_id, record)
    assert results.count_finished(store, match_id)


class Renderer:
    """Renders like the API does, counting how often it is asked to."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, row: dict) -> bytes:
        self.calls += 1
        return orjson.dumps(row)


def test_the_page_is_kept_until_a_rated_match_is_counted(redis_url: str) -> None:
    store = Store.from_url(redis_url)
    for bot in ("bot-a", "bot-b"):
        store.save_bot({"id": bot, "name": bot.upper(), "url": "http://127.0.0.1:9/",
                        "games": [GAME]})
    finished_match(store, redis_url, "m-1", "bot-a", "bot-b")
    render = Renderer()
    first = leaderboard_rows(store, GAME, render)
    assert leaderboard_rows(store, GAME, render) == first
    assert render.calls == 2  # a row per bot, once
    finished_match(store, redis_url, "m-2", "bot-b", "bot-a")
    second = leaderboard_rows(store, GAME, render)
    assert render.calls == 4
    assert [orjson.loads(row) for row in second] == leaderboard(store, GAME)
    assert [row["games"] for row in leaderboard(store, GAME)] == [2, 2]


def test_new_tournament_intervals_change_the_page(redis_url: str) -> None:
    store = Store.from_url(redis_url)
    for bot in ("bot-a", "bot-b"):
        store.save_bot({"id": bot, "name": bot, "url": "http://127.0.0.1:9/",
                        "games": [GAME]})
    finished_match(store, redis_url, "m-1", "bot-a", "bot-b")
    render = Renderer()
    assert orjson.loads(leaderboard_rows(store, GAME, render)[0])["low"] is None
    store.redis.hset(ratings_key(GAME, "intervals"), "bot-a",
                     dumps({"rating": 1500.0, "low": 1400.0, "high": 1600.0}))
    row = orjson.loads(leaderboard_rows(store, GAME, render)[0])
    assert render.calls == 4
    assert row["bot_id"] == "bot-a"
    assert row["high"] - row["low"] == 200.0


def test_the_leaderboard_and_a_history_come_a_page_at_a_time(api, redis_url: str) -> None:
    """Five bots, six rated matches: pages of the leaderboard in Elo order, and of one
    bot's history in the order its matches were counted."""
    store = Store.from_url(redis_url)
    bots = [f"bot-{letter}" for letter in "abcde"]
    for bot in bots:
        store.save_bot({"id": bot, "name": bot, "url": "http://127.0.0.1:9/", "games": [GAME]})
    for index in range(6):
        finished_match(store, redis_url, f"m-{index}", "bot-a", bots[1 + index % 4])
    whole = api.get(f"/ratings/{GAME}?limit=200").get_json()
    assert whole["total"] == 5 and [row["bot_id"] for row in whole["leaderboard"]][0] == "bot-a"
    pages = [api.get(f"/ratings/{GAME}?offset={offset}&limit=2").get_json()
             for offset in (0, 2, 4)]
    assert [row for page in pages for row in page["leaderboard"]] == whole["leaderboard"]
    assert [len(page["leaderboard"]) for page in pages] == [2, 2, 1]
    history = api.get(f"/ratings/{GAME}/history?bot=bot-a&offset=4&limit=5").get_json()
    assert history["total"] == 6 and [n for n, _, _ in history["history"]] == [5, 6]
    assert {version for _, _, version in history["history"]} == {1}, "the version played"
    assert history["history"][-1][1] == whole["leaderboard"][0]["rating"]
    assert api.get(f"/ratings/{GAME}/history?bot=bot-e").get_json()["total"] == 1
    assert api.get(f"/ratings/{GAME}/history?bot=bot-nobody").status_code == 404
    assert api.get(f"/ratings/{GAME}/history").status_code == 400
    assert api.get(f"/ratings/{GAME}/history?bot=bot-a&limit=1001").status_code == 400


def test_a_new_version_keeps_its_rating_with_its_interval_widened(api, redis_url: str) -> None:
    """Issue 27: a bot's interval measured on version 1 is shown twice as wide once the bot
    plays version 2 (its Elo unchanged), and the page kept before is not served."""
    store = Store.from_url(redis_url)
    made = api.post("/accounts", token=ADMIN, json={"name": "versioned"}).get_json()
    bot = api.post("/bots", token=made["token"], json={
        "name": "versioned", "url": "http://127.0.0.1:9/v1", "games": [GAME]}).get_json()
    store.save_bot({"id": "bot-b", "name": "bot-b", "url": "http://127.0.0.1:9/",
                    "games": [GAME]})
    finished_match(store, redis_url, "m-1", bot["id"], "bot-b")
    store.redis.hset(ratings_key(GAME, "intervals"), bot["id"], dumps(
        {"rating": 1500.0, "low": 1450.0, "high": 1550.0, "version": 1}))
    before = {row["bot_id"]: row for row in api.get(f"/ratings/{GAME}").get_json()["leaderboard"]}
    changed = api.request("PATCH", f"/bots/{bot['id']}", token=made["token"],
                          json={"url": "http://127.0.0.1:9/v2"})
    assert changed.get_json()["version"] == 2
    after = {row["bot_id"]: row for row in api.get(f"/ratings/{GAME}").get_json()["leaderboard"]}
    assert after[bot["id"]]["rating"] == before[bot["id"]]["rating"]
    assert before[bot["id"]]["high"] - before[bot["id"]]["low"] == 100.0
    assert after[bot["id"]]["high"] - after[bot["id"]]["low"] == 200.0
    assert after["bot-b"] == before["bot-b"]


def test_the_leaderboard_shows_each_bots_weng_lin_skill_beside_its_elo(api, redis_url: str
                                                                      ) -> None:
    """Issue 28: `/ratings/{game}` gains mu, sigma and ordinal over every rated match of the
    game, and the same by number of players: the skills of `tournament.skill` replayed over
    the matches in the order they were counted."""
    store = Store.from_url(redis_url)
    for bot in ("bot-a", "bot-b", "bot-c"):
        store.save_bot({"id": bot, "name": bot, "url": "http://127.0.0.1:9/", "games": [GAME]})
    played = [("bot-a", "bot-b"), ("bot-a", "bot-c"), ("bot-b", "bot-c"), ("bot-a", "bot-b")]
    expected: dict[str, skill.Skill] = {}
    for index, (winner, loser) in enumerate(played):
        finished_match(store, redis_url, f"m-{index}", winner, loser)
        expected.update(skill.rate(expected, [winner, loser], [1, 2]))
    rows = {row["bot_id"]: row for row in api.get(f"/ratings/{GAME}").get_json()["leaderboard"]}
    for bot, value in expected.items():
        assert {key: rows[bot][key] for key in ("mu", "sigma", "ordinal")} == value.shown()
        assert rows[bot]["by_players"] == {"2": value.shown()}
    assert rows["bot-a"]["mu"] > rows["bot-b"]["mu"] > rows["bot-c"]["mu"]
