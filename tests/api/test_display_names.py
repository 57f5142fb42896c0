"""Names the pages show are text a reader can trust: no control characters or
text-direction overrides (U+202E turned the rest of a table cell around, one name shown as
another), and a bot seat is shown under its bot's own name (a match creator could seat the
admin's public bot under any name it chose: an audit of the pages)."""

from __future__ import annotations

import pytest

from tests.support.apitest import ADMIN

HOSTILE = ["champion\u202egnp.exe", "two\nlines", "bell\x07", "isolate\u2066x\u2069",
           "c1 \x85 next line"]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_name_with_control_or_direction_characters_is_refused(api, bot_server, name):
    url = bot_server.url("/random")
    bot = api.post("/bots", token=ADMIN, json={"name": name, "url": url, "games": ["aladino"]})
    assert bot.status_code == 400 and list(bot.get_json()["errors"]) == ["name"]
    good = api.register_bot(url, name="fine name é 漢")
    renamed = api.request("PATCH", f"/bots/{good}", token=ADMIN, json={"name": name})
    assert renamed.status_code == 400
    seat = api.post("/matches", token=ADMIN, json={
        "game": "aladino", "seats": [{"kind": "pull", "name": name}, {"kind": "pull"}]})
    assert seat.status_code == 400 and "0" in seat.get_json()["errors"]["seats"]
    tournament = api.post("/tournaments", token=ADMIN, json={
        "game": "aladino", "bots": [good, good], "name": name})
    assert tournament.status_code == 400 and "name" in tournament.get_json()["errors"]


def test_a_bot_seat_is_shown_under_its_bots_name(api, bot_server):
    bot = api.register_bot(bot_server.url("/random"), name="the real one")
    renamed = api.post("/matches", token=ADMIN, json={
        "game": "aladino", "seats": [{"kind": "bot", "bot_id": bot, "name": "impostor"},
                                     {"kind": "pull", "name": "ann"}]})
    assert renamed.status_code == 400
    assert renamed.get_json()["errors"]["seats"]["0"] == {
        "name": ["a bot seat is shown under its bot's name"]}
    match = api.create_match("aladino", [{"kind": "bot", "bot_id": bot},
                                         {"kind": "pull", "name": "ann"}])
    assert [seat["name"] for seat in match["seats"]] == ["the real one", "ann"]
