"""An account watches its own bot play (issue 27): with `private:read` its token streams
the bot's seat of a running match, debug and info included; another account, or its own
token without `private:read`, is refused. Through `referee serve` and a real worker."""

from __future__ import annotations

from tests.support.apitest import ADMIN
from tests.support.sse import open_stream


def account(api, name: str) -> str:
    made = api.post("/accounts", token=ADMIN, json={"name": name})
    assert made.status_code == 201, made.get_json()
    return made.get_json()["token"]


def test_an_owner_streams_its_bots_seat_with_its_debug_and_nobody_else_can(
        live_server, api, workers, bot_server):
    owner, stranger = account(api, "owner"), account(api, "stranger")
    bot = api.post("/bots", token=owner, json={
        "name": "talker", "url": bot_server.url("/chatty"), "games": ["aladino"]}).get_json()
    match = api.post("/matches", token=owner, json={
        "game": "aladino", "seats": [{"kind": "bot", "bot_id": bot["id"]}, {"kind": "pull"}],
        "pull_deadline_ms": 120_000}).get_json()  # parks at the pull seat after the bot moves
    workers.start_ready(1)
    url = f"{live_server.url}/matches/{match['id']}/events"
    stream = open_stream(url, owner, seat=0)
    assert stream.response.status_code == 200, stream.response.text
    first_step = next(event for event in stream.events() if event.name == "step")
    stream.close()
    played = first_step.data["played"]
    assert played["seat"] == 0 and played["debug"].startswith("step 0 ")
    assert played["info"]["depth"] == 0 and played["debug_truncated"] is True
    assert first_step.data["seat"] == 0
    narrow = api.post("/accounts/me/tokens", token=owner,
                      json={"scopes": ["matches:write"]}).get_json()["token"]
    for token in (stranger, narrow):
        refused = open_stream(url, token, seat=0)
        assert refused.response.status_code == 403, refused.response.text
        assert "debug" not in refused.response.text
        refused.close()
    spectator = open_stream(url, stranger)  # as a spectator, like anyone: no debug
    assert spectator.response.status_code == 200
    seen = next(event for event in spectator.events() if event.name == "step")
    spectator.close()
    assert "debug" not in seen.data["played"] and seen.data["played"]["action"] is None
