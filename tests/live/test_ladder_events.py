"""GET /ladders/{id}/events through `referee serve` while real workers check the entries and
play the ladder: `standings` first, an `entry` for each entry that changes, and for every
counted match its `match` and the new `standings`, each event as openapi.yaml says."""

from __future__ import annotations

import json

from tests.support.apitest import ADMIN, check_event_stream
from tests.support.ladder_bots import LadderBots
from tests.support.sse import Event, open_stream
from tournament import ladders


def test_a_ladder_streams_its_entries_matches_and_standings(live_server, api, workers):
    farm = LadderBots().start()
    try:
        workers.start_ready(1)
        bots = [api.register_bot(farm.url(f"/p/{k}"), ["aladino"], name=f"p{k}")
                for k in (1, 6)]
        made = api.post("/ladders", token=ADMIN, json={
            "game": "aladino", "players": 2, "concurrency": 1, "seed": 3}).get_json()
        stream = open_stream(f"{live_server.url}/ladders/{made['id']}/events")
        assert stream.response.status_code == 200
        for bot in bots:
            assert api.post(f"/ladders/{made['id']}/entries", token=ADMIN,
                            json={"bot": bot}).status_code == 202
        events: list[Event] = []
        for event in stream.events():
            events.append(event)
            if sum(e.name == "match" for e in events) >= 2 and event.name == "standings":
                break
        stream.close()
    finally:
        farm.shutdown()
        farm.server_close()
    names = [event.name for event in events]
    assert names[0] == "standings" and events[0].data["standings"] == []
    active = [e.data["bot"] for e in events
              if e.name == "entry" and e.data["status"] == ladders.ACTIVE]
    assert sorted(active) == sorted(bots)
    first_match = names.index("match")
    assert first_match > names.index("entry")  # a bot plays once checked
    for index, event in enumerate(events):
        if event.name == "match":
            assert event.data["ladder_id"] == made["id"] and event.data["status"] == "finished"
            assert events[index + 1].name == "standings"
    last = events[-1].data
    assert {row["bot"] for row in last["standings"]} == set(bots) and last["counted"] >= 2
    body = "".join(f"event: {e.name}\ndata: {json.dumps(e.data)}\n\n" for e in events)
    check_event_stream(f"/ladders/{made['id']}/events", body.encode())
