"""Standings show draws (issue 15.9): a tournament played by a real worker in which one bot
always forfeits, so the two others share first place in every match."""

from __future__ import annotations

from tests.support.apitest import ADMIN, wait_finished


def test_shared_first_places_are_draws_not_wins(api, bot_server, refused_url, run_worker):
    good = [api.register_bot(bot_server.url("/random"), games=["aladino"], name=f"good {n}")
            for n in range(2)]
    absent = api.register_bot(refused_url, games=["aladino"], name="absent")
    created = api.post("/tournaments", token=ADMIN, json={
        "game": "aladino", "bots": [*good, absent], "players": 3, "seed": 5})
    assert created.status_code == 201, created.get_json()
    run_worker()
    final = wait_finished(api, created.get_json()["id"])
    rows = {row["bot_id"]: row for row in final["standings"]}
    for bot in good:
        assert (rows[bot]["matches"], rows[bot]["wins"], rows[bot]["draws"]) == (3, 0, 3)
    assert (rows[absent]["wins"], rows[absent]["draws"], rows[absent]["forfeits"]) == (0, 0, 3)
