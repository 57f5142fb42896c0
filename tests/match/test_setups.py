"""One player of Aldabas is its solo mode, however a match is started (issue 15.6), and a
setup the game lacks is refused with the game's setups named."""

from __future__ import annotations

from tests.support.apitest import ADMIN

SOLO_HINT = '1 player with options {"mode": "solo"}'


def test_a_one_seat_aldabas_match_is_solo_and_is_played(api, bot_server, run_worker):
    bot = api.register_bot(bot_server.url("/random"), games=["aldabas"])
    match = api.create_match("aldabas", [{"kind": "bot", "bot_id": bot}])
    assert match["num_players"] == 1 and match["options"]["mode"] == "solo"
    run_worker()
    record = api.get(f"/matches/{match['id']}/replay").get_json()
    assert record["options"]["mode"] == "solo" and record["result"] is not None
    report = api.post("/replays/verify", json=record).get_json()
    assert report["valid"], report


def test_setups_aldabas_lacks_are_refused_naming_its_setups(api):
    for seats, options, field in [(1, {"mode": "multi"}, "options"), (5, {}, "seats"),
                                  (2, {"mode": "solo"}, "options")]:
        response = api.post("/matches", token=ADMIN, json={
            "game": "aldabas", "seats": [{"kind": "pull"}] * seats, "options": options})
        assert response.status_code == 400, response.get_json()
        assert SOLO_HINT in response.get_json()["errors"][field][0]


def test_a_one_player_aldabas_tournament_is_solo(api, bot_server):
    bots = [api.register_bot(bot_server.url("/random"), games=["aldabas"], name=f"b{n}")
            for n in range(2)]
    response = api.post("/tournaments", token=ADMIN,
                        json={"game": "aldabas", "bots": bots, "players": 1})
    assert response.status_code == 201, response.get_json()
    tournament = response.get_json()
    assert tournament["options"]["mode"] == "solo" and tournament["progress"]["total"] == 2
    refused = api.post("/tournaments", token=ADMIN, json={
        "game": "aldabas", "bots": bots, "players": 1, "options": {"mode": "multi"}})
    assert refused.status_code == 400 and SOLO_HINT in refused.get_json()["errors"]["options"][0]
