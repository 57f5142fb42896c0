"""Who may follow a match, and what a bad request gets, through the app with every answer
checked against openapi.yaml (a finished match's stream ends, so the test client reads it
whole)."""

from __future__ import annotations

import json

import pytest

from tests.support.apitest import ADMIN, drive_match

GAME = "aladino"


def parse(body: bytes) -> list[tuple[str, str | None, dict]]:
    """(event, id, data) of each event of a whole stream."""
    events = []
    for block in body.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines()
                      if line and not line.startswith(":") and ": " in line)
        if "data" in fields:
            events.append((fields["event"], fields.get("id"), json.loads(fields["data"])))
    return events


@pytest.fixture
def bot(api, random_bot_url) -> str:
    return api.register_bot(random_bot_url, [GAME], name="random")


@pytest.fixture
def finished(api, redis_url, bot) -> str:
    match = api.create_match(GAME, [{"kind": "bot", "bot_id": bot}] * 2, seed=4)
    assert drive_match(redis_url, match["id"])["status"] == "finished"
    return match["id"]


@pytest.fixture
def parked(api, bot) -> tuple[str, str]:
    """A match waiting for its pull seat 0 (nobody drives it): (id, seat token)."""
    match = api.create_match(GAME, [{"kind": "pull"}, {"kind": "bot", "bot_id": bot}], seed=4)
    return match["id"], match["tokens"][0]["token"]


def test_a_finished_match_streams_start_steps_result_and_ends(api, finished):
    response = api.get(f"/matches/{finished}/events")
    assert response.status_code == 200
    assert response.mimetype == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-cache"
    assert response.data.startswith(b"retry: 3000\n\n")
    events = parse(response.data)
    steps = api.get(f"/matches/{finished}").get_json()["step"]
    assert [name for name, _, _ in events] == ["start"] + ["step"] * steps + ["result"]
    assert [event_id for _, event_id, _ in events[1:-1]] == [str(k) for k in range(steps)]
    assert events[-1][2]["status"] == "finished"


def test_anyone_may_view_a_public_replay_as_a_seat(api, finished):
    events = parse(api.get(f"/matches/{finished}/events?seat=1").data)
    assert {data["seat"] for _, _, data in events[:-1]} == {1}
    mine = [data["played"] for name, _, data in events if name == "step"
            and data["played"]["seat"] == 1]
    assert mine and all(played["action"] is not None for played in mine)


def test_an_unknown_match_is_404(api):
    assert api.get("/matches/m-nope/events").status_code == 404


@pytest.mark.parametrize("value", ["x", "-1", "1.5", "99999999999", "٣", "1 2"])
def test_a_bad_last_event_id_is_400(api, finished, value):
    response = api.get(f"/matches/{finished}/events", headers={"Last-Event-ID": value})
    assert response.status_code == 400
    assert "Last-Event-ID" in response.get_json()["errors"]


@pytest.mark.parametrize("query", ["last_event_id=x", "last_event_id=-2", "seat=-1", "seat=x"])
def test_bad_query_parameters_are_400(api, finished, query):
    assert api.get(f"/matches/{finished}/events?{query}").status_code == 400


def test_a_seat_past_the_last_is_404(api, finished):
    assert api.get(f"/matches/{finished}/events?seat=2", token=ADMIN).status_code == 404


def test_a_seat_view_of_a_running_match_needs_its_token(api, parked):
    match_id, token = parked
    assert api.get(f"/matches/{match_id}/events?seat=0").status_code == 401
    assert api.get(f"/matches/{match_id}/events?seat=1", token=token).status_code == 403


def test_a_token_of_another_match_is_403(api, parked, bot):
    other = api.create_match(GAME, [{"kind": "pull"}, {"kind": "bot", "bot_id": bot}])
    response = api.get(f"/matches/{parked[0]}/events", token=other["tokens"][0]["token"])
    assert response.status_code == 403


def test_a_match_whose_deal_is_in_play_is_the_admins_only(api, bot, random_bot_url):
    """Both seat rotations of a tournament deal are queued: what a spectator saw of one
    would tell the hidden tokens of the other."""
    other = api.register_bot(random_bot_url, [GAME], name="random-2")
    tournament = api.post("/tournaments", token=ADMIN, json={
        "game": GAME, "bots": [bot, other], "seed": 2}).get_json()
    match_id = tournament["matches"][0]
    assert api.get(f"/matches/{match_id}/events").status_code == 401
    assert api.get(f"/matches/{match_id}/events", token="not-a-token").status_code == 403


def test_a_running_match_refuses_to_resume_after_a_step_not_recorded_yet(api, parked):
    """No client can have an event of a step not recorded: waiting for the steps after it
    would hold the stream with nothing to send until long after they come."""
    match_id, token = parked
    for claimed in ("0", "3"):
        response = api.get(f"/matches/{match_id}/events", token=token,
                            headers={"Last-Event-ID": claimed})
        assert response.status_code == 409
        assert "not recorded yet" in response.get_json()["detail"]


def test_a_last_event_id_past_the_last_step_gets_only_the_result(api, finished):
    response = api.get(f"/matches/{finished}/events", headers={"Last-Event-ID": "9999999999"})
    assert [name for name, _, _ in parse(response.data)] == ["result"]
