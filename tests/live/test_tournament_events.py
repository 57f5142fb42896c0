"""GET /tournaments/{id}/events and GET /ratings/{game}/events through `referee serve`
while a real worker plays a tournament: the table first, then every counted match and the
new table, then `finished`; the leaderboard again after every rated match."""

from __future__ import annotations

import threading

from tests.support.apitest import ADMIN
from tests.support.sse import Event, open_stream

GAME = "aladino"
WAIT_S = 120


def read_until(stream, done, into: list[Event]) -> None:
    for event in stream.events():
        into.append(event)
        if done(event):
            break
    stream.close()


def test_a_tournament_streams_its_matches_and_tables_to_the_end(live_server, api, workers,
                                                                random_bot_url):
    bots = [api.register_bot(random_bot_url, [GAME], name=f"random-{n}") for n in range(3)]
    tournament = api.post("/tournaments", token=ADMIN, json={
        "game": GAME, "bots": bots, "seed": 7}).get_json()
    matches = tournament["matches"]
    stream = open_stream(f"{live_server.url}/tournaments/{tournament['id']}/events")
    board = open_stream(f"{live_server.url}/ratings/{GAME}/events")
    assert stream.response.status_code == board.response.status_code == 200
    events: list[Event] = []
    boards: list[Event] = []
    readers = [
        threading.Thread(target=read_until, args=(stream, lambda e: False, events)),
        threading.Thread(target=read_until, args=(board, lambda e: all(
            row["games"] == 4 and row["low"] is not None
            for row in e.data["leaderboard"]) and len(e.data["leaderboard"]) == 3, boards))]
    for reader in readers:
        reader.start()
    workers.start_ready(1)
    for reader in readers:
        reader.join(WAIT_S)
        assert not reader.is_alive(), "a stream did not end"

    assert events[0].name == "standings" and events[0].data["progress"]["done"] == 0
    assert events[-1].name == "finished"
    counted = [e.data for e in events if e.name == "match"]
    assert sorted(m["match_id"] for m in counted) == sorted(matches)
    assert all(m["tournament_id"] == tournament["id"] and m["status"] == "finished"
               for m in counted)
    for match in counted:  # each match event says what GET /matches/{id} says
        shown = api.get(f"/matches/{match['match_id']}").get_json()
        assert (match["seats"], match["result"], match["steps"]) == (
            shown["seats"], shown["result"], shown["step"])
    names = [e.name for e in events]
    for index, name in enumerate(names):  # every match event is followed by a table
        if name == "match":
            assert "standings" in names[index + 1:index + 1 + names.count("match") + 1]
    final = api.get(f"/tournaments/{tournament['id']}").get_json()
    assert events[-1].data["standings"] == final["standings"]
    assert events[-1].data["ratings"] == final["ratings"]
    assert events[-2].name == "standings" and events[-2].data["status"] == "finished"
    assert [e.data["progress"]["done"] for e in events if e.name == "standings"][-1] == 6

    assert boards[0].name == "leaderboard"
    assert boards[-1].data == api.get(f"/ratings/{GAME}?limit=200").get_json()
    assert len(boards) >= 2  # it changed while the client watched
