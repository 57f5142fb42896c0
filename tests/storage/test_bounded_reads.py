"""Every list answers a page: bots, a tournament's matches (its view lists only the first
ones), besides matches, tournaments, the leaderboard and rating histories
(tests/tournament/test_leaderboard_page.py)."""

from __future__ import annotations

from tests.support.apitest import ADMIN
from tournament import tournaments


def test_bots_come_a_page_at_a_time_oldest_first(api, random_bots):
    whole = api.get("/bots?limit=200").get_json()
    assert whole["total"] == 4 and [bot["id"] for bot in whole["bots"]] == random_bots
    pages = [api.get(f"/bots?offset={offset}&limit=3").get_json() for offset in (0, 3, 6)]
    assert [bot for page in pages for bot in page["bots"]] == whole["bots"]
    assert [len(page["bots"]) for page in pages] == [3, 1, 0]
    assert pages[1] == {"bots": whole["bots"][3:], "total": 4, "offset": 3, "limit": 3}
    assert api.get("/bots?limit=0").status_code == 400
    assert api.get("/bots?limit=201").status_code == 400
    assert api.get("/bots?offset=-1").status_code == 400


def test_a_tournament_lists_its_first_matches_and_pages_them_all(api, random_bots,
                                                                  monkeypatch):
    monkeypatch.setattr(tournaments, "VIEW_MATCHES", 5)
    created = api.post("/tournaments", token=ADMIN, json={
        "game": "aladino", "bots": random_bots[:3], "rounds": 2}).get_json()
    everything = [match_id for offset in range(0, 12, 4) for match_id in
                  [match["id"] for match in api.get(
                      f"/tournaments/{created['id']}/matches?offset={offset}&limit=4"
                  ).get_json()["matches"]]]
    view = api.get(f"/tournaments/{created['id']}").get_json()
    assert view["matches_total"] == 12 == len(set(everything))
    assert view["matches"] == everything[:5]
    page = api.get(f"/tournaments/{created['id']}/matches?offset=10").get_json()
    assert page["total"] == 12 and [m["id"] for m in page["matches"]] == everything[10:]
    assert all(match["seed"] is None for match in page["matches"])  # deals not over
    admin = api.get(f"/tournaments/{created['id']}/matches?offset=10", token=ADMIN).get_json()
    assert all(match["seed"] is not None for match in admin["matches"])
    assert api.get("/tournaments/t-nothing/matches").status_code == 404
