"""Round-robin tournaments through the API, played by real `referee worker` processes against
real HTTP bots; every response is checked against openapi.yaml."""

from __future__ import annotations

from collections import Counter
from math import comb

import pytest
import redis

import engines
from tests.support.apitest import ADMIN, wait_finished
from tests.support.tournament_checks import (
    check_live_elo,
    check_round_robin,
    finished_matches,
    match_results,
    start,
)
from tournament import ratings
from tournament.store import bot_key

BOTS = 4


@pytest.mark.parametrize("game", engines.names())
def test_a_round_robin_of_four_bots_completes_for_every_player_count(
        game, api, register_bots, workers, redis_url):
    engine = engines.get(game)
    bots = register_bots(BOTS)
    counts = [n for n in range(max(engine.min_players, 2), min(engine.max_players, BOTS) + 1)]
    created = {players: start(api, game, bots, players, seed=100 + players)
               for players in counts}
    for players, view in created.items():
        assert view["status"] == "running" and view["progress"]["total"] == comb(4, players) * \
            players
        assert view["seed"] == 100 + players  # the admin sees the seed at once
    workers.start(2)
    all_matches = []
    for players, view in created.items():
        final = wait_finished(api, view["id"], timeout=90)
        check_round_robin(api, final, bots, players, rounds=1)
        all_matches += finished_matches(api, final)
    check_live_elo(api, redis_url, game, all_matches)
    listed = api.get("/tournaments").get_json()
    assert listed["total"] == len(counts)
    assert {t["id"]: t["status"] for t in listed["tournaments"]} == {
        view["id"]: "finished" for view in created.values()}


def test_a_solo_aldabas_tournament_ranks_by_average_score_on_shared_deals(
        api, register_bots, workers, redis_url):
    bots = register_bots(BOTS)
    view = start(api, "aldabas", bots, 1, rounds=3, options={"mode": "solo"}, seed=9)
    assert view["progress"]["total"] == BOTS * 3
    workers.start(2)
    final = wait_finished(api, view["id"])
    matches = finished_matches(api, final)
    seeds = Counter(match["seed"] for match in matches)
    assert len(seeds) == 3 and set(seeds.values()) == {BOTS}  # every bot plays the same deals
    for seed in seeds:
        assert {m["seats"][0]["bot_id"] for m in matches if m["seed"] == seed} == set(bots)
    expected = ratings.solo_ranking(match_results(matches))
    assert [{"bot" if key == "bot_id" else key: value for key, value in row.items()
             if key != "name"} for row in final["solo_ranking"]] == expected
    assert all(row["low"] < row["mean"] < row["high"] or row["stdev"] == 0
               for row in final["solo_ranking"])
    assert final["ratings"] is None
    assert all(row["points"] == 0 and row["wins"] == 0 for row in final["standings"])
    assert api.get("/ratings/aldabas").get_json() == {"game": "aldabas", "leaderboard": [],
                                                      "total": 0, "offset": 0, "limit": 50}


def test_a_new_tournament_hides_its_seed_from_everyone_but_the_admin(api, register_bots):
    bots = register_bots(2)
    view = start(api, "aladino", bots, 2, seed=77)
    assert api.get(f"/tournaments/{view['id']}").get_json()["seed"] is None
    assert api.get(f"/tournaments/{view['id']}", token=ADMIN).get_json()["seed"] == 77
    assert view["standings"] == [] and view["ratings"] is None
    assert view["faults"] == {bot: 0 for bot in bots}


def test_starting_a_tournament_needs_the_admin_token(api, register_bots):
    body = {"game": "aladino", "bots": register_bots(2)}
    assert api.post("/tournaments", json=body).status_code == 401
    assert api.post("/tournaments", json=body, token="wrong").status_code == 403


@pytest.mark.parametrize(("change", "field", "reason", "status"), [
    ({"game": "chess"}, "game", "unknown game", 400),
    ({"players": 5}, "players", "2 to 4 players", 400),
    ({"players": 1}, "players", "not 1", 400),
    ({"players": 3}, "bots", "at least 3 bots", 422),
    ({"bots": ["bot-nobody"]}, "bots", "no registered bot", 422),
    ({"rounds": 0}, "rounds", "greater than or equal to 1", 400),
    ({"rounds": 1000, "players": 2}, "rounds", "at most", 422),
    ({"options": {"mode": "solo"}}, "options", "takes no options", 400),
    ({"failure_policy": {"timeout": "shrug"}}, "failure_policy", "Must be one of", 400),
    ({"deadline_ms": 1}, "deadline_ms", "greater than or equal to 10", 400),
    ({"surprise": 1}, "surprise", "Unknown field", 400),
])
def test_tournament_fields_are_validated_and_named(api, register_bots, change, field, reason,
                                                   status):
    """400 for what the spec says (fields, players, options); 422 for what it cannot (the
    registered bots, the size of the schedule)."""
    bots = register_bots(2)
    if change.get("rounds") == 1000:
        bots = register_bots(BOTS) + bots
    body = {"game": "aladino", "bots": bots, **change}
    response = api.post("/tournaments", token=ADMIN, json=body)
    assert response.status_code == status, response.get_json()
    errors = response.get_json()["errors"]
    assert field in errors and reason in str(errors[field]), errors


def test_a_bot_may_enter_once_and_must_play_the_game(api, bot_farm):
    only_caravans = api.register_bot(bot_farm.url("c"), games=["caravans"], name="c")
    other = api.register_bot(bot_farm.url("o"), name="o")
    for bots, reason in (([other, other], "only once"), ([other, only_caravans], "does not play")):
        response = api.post("/tournaments", token=ADMIN, json={"game": "aladino", "bots": bots})
        assert response.status_code == 422 and reason in str(response.get_json()["errors"])


def test_unknown_tournaments_and_games_are_404(api):
    assert api.get("/tournaments/t-nothing").status_code == 404
    assert api.get("/ratings/chess").status_code == 404
    assert api.get("/ratings/aladino").get_json() == {"game": "aladino", "leaderboard": [],
                                                      "total": 0, "offset": 0, "limit": 50}
    assert api.get("/tournaments").get_json() == {"tournaments": [], "total": 0, "offset": 0,
                                                  "limit": 50}


def test_faults_and_forfeits_are_tallied_per_bot(api, register_bots, workers, refused_url):
    good = register_bots(2)
    broken = api.register_bot(refused_url, name="broken")
    view = start(api, "aladino", [*good, broken], 2, failure_policy={"crash": "forfeit"})
    workers.start(1)
    final = wait_finished(api, view["id"])
    table = {row["bot_id"]: row for row in final["standings"]}
    assert table[broken]["matches"] == table[broken]["forfeits"] == table[broken]["faults"] == 4
    assert table[broken]["points"] == 0 and final["standings"][-1]["bot_id"] == broken
    assert final["faults"] == {good[0]: 0, good[1]: 0, broken: 4}
    assert final["progress"]["failed"] == 0


def test_matches_that_fail_are_counted_as_failed_and_the_tournament_ends(
        api, register_bots, workers, redis_url):
    bots = register_bots(2)
    view = start(api, "aladino", bots, 2)
    redis.Redis.from_url(redis_url).delete(bot_key(bots[1]))  # an operator removed a bot
    workers.start(1)
    final = wait_finished(api, view["id"])
    assert final["progress"] == {"total": 2, "done": 2, "failed": 2, "running": 0, "queued": 0}
    assert final["standings"] == [] and final["ratings"] == []
    assert all(api.get(f"/matches/{m}").get_json()["status"] == "failed"
               for m in final["matches"])
