"""GET /matches/{id}/events through `referee serve` (gunicorn, gevent) while a real worker
plays the match: every event of every viewer (spectator, seat token, admin) is compared
with what the replay endpoints show once the match is over; a client joining mid-match
gets what it missed first; Last-Event-ID resumes with no gap and no repeat."""

from __future__ import annotations

import random
import threading
import time

import requests

from referee.match.clock import Clocks, TimeControl
from tests.support.apitest import ADMIN, replay_states
from tests.support.sse import Event, open_stream, read_all

GAME = "aladino"
PULL_SEAT = 1
WAIT_S = 120


def start_match(api, bot_url: str, seed: int = 3, **settings: object) -> tuple[str, str]:
    """Aladino: seat 0 the random bot, seat 1 a pull seat this test plays; (id, token)."""
    bot = api.register_bot(bot_url, [GAME], name=f"random-{seed}")
    match = api.create_match(GAME, [{"kind": "bot", "bot_id": bot}, {"kind": "pull"}],
                             seed=seed, pull_deadline_ms=WAIT_S * 1000, **settings)
    return match["id"], match["tokens"][0]["token"]


def play_pull_seat(base: str, match_id: str, token: str, moves: int | None = None,
                   seed: int = 0) -> int:
    """Play random legal moves for the pull seat through the API until the match is over
    (or `moves` were played); the number played."""
    rng = random.Random(seed)
    auth = {"Authorization": f"Bearer {token}"}
    played, deadline = 0, time.monotonic() + WAIT_S
    while (moves is None or played < moves) and time.monotonic() < deadline:
        seen = requests.get(f"{base}/matches/{match_id}/observation", headers=auth,
                            timeout=10).json()
        if seen["status"] in ("finished", "failed"):
            return played
        if seen["to_move"] != PULL_SEAT:
            time.sleep(0.02)
            continue
        answer = requests.post(f"{base}/matches/{match_id}/actions", headers=auth, timeout=10,
                               json={"step": seen["step"],
                                     "action": rng.choice(seen["legal_actions"])})
        assert answer.status_code == 200, answer.text
        played += 1
    assert moves is not None, "the match did not end"
    return played


class Reader(threading.Thread):
    """Reads one stream to its end in the background."""

    def __init__(self, url: str, token: str | None = None, **params: object):
        super().__init__(daemon=True)
        self.stream = open_stream(url, token, **params)
        assert self.stream.response.status_code == 200, self.stream.response.text
        self.events: list[Event] = []
        self.start()

    def run(self) -> None:
        self.events.extend(self.stream.events())

    def result(self) -> list[Event]:
        self.join(WAIT_S)
        assert not self.is_alive(), "the stream did not end"
        return self.events


def expected(api, match_id: str, seat: int | None, whole: bool = False,
             updates: bool = False) -> list[dict]:
    """The events a viewer should get, from the replay endpoints of the finished match:
    start (the view at step 0), then for step k what /replay/k shows played and the view
    of /replay/k+1; for the admin every step whole and the state after it. A seat token's
    stream (`updates`) has after step k the seat's `update` when it does not move next."""
    record = api.get(f"/matches/{match_id}/replay").get_json()
    query = "" if seat is None else f"?seat={seat}"
    frames = [api.get(f"/matches/{match_id}/replay/{k}{query}").get_json()
              for k in range(len(record["steps"]) + 1)]
    events = [{"name": "start", "id": None, "data": {
        "match_id": match_id, "game": GAME, "seat": seat, "step": 0,
        "to_move": frames[0]["to_move"], "view": frames[0]["view"]}}]
    states = replay_states(record)
    for k, step in enumerate(record["steps"]):
        played = frames[k]["played"]
        view = {key: value for key, value in frames[k + 1]["view"].items() if key != "log"}
        data = {"match_id": match_id, "step": k, "seat": seat, "to_move": frames[k + 1]["to_move"],
                "view": view, "played": {**step, "events": played["events"]} if whole else played}
        if whole:
            data["state"] = states[k + 1]
        events.append({"name": "step", "id": str(k), "data": data})
        if updates and frames[k + 1]["to_move"] not in (None, seat):
            events.append({"name": "update", "id": None, "data": {
                "protocol": "referee/1", "type": "update", "match_id": match_id,
                "seat": seat, "step": k, "events": played["events"],
                "clock": clocks_after(record, k + 1, seat)}})
    match = api.get(f"/matches/{match_id}").get_json()
    events.append({"name": "result", "id": None, "data": {
        "match_id": match_id, "status": "finished", "steps": len(record["steps"]),
        "result": match["result"], "forfeit": match["forfeit"], "error": None}})
    return events


def clocks_after(record: dict, steps: int, seat: int) -> dict | None:
    """A seat's `clock` after the first `steps` steps (None: the match has no clock)."""
    control = TimeControl.from_dict(record.get("time_control"))
    if control is None:
        return None
    return Clocks.replay(control, record["num_players"], record["steps"][:steps]).payload(seat)


def as_dicts(events: list[Event]) -> list[dict]:
    return [{"name": e.name, "id": e.id, "data": e.data} for e in events]


def whole_log(events: list[Event]) -> list[dict]:
    """The viewer's log at the end, from the start's and each step's new entries."""
    log = list(events[0].data["view"]["log"])
    for event in events[1:]:
        if event.name == "step":
            log += event.data["played"]["events"]
    return log


def test_every_viewer_gets_every_step_as_the_replay_shows_it(live_server, api, workers,
                                                              random_bot_url):
    workers.start_ready(1)
    match_id, token = start_match(api, random_bot_url)
    url = f"{live_server.url}/matches/{match_id}/events"
    readers = {"spectator": Reader(url), "seat": Reader(url, token),
               "admin": Reader(url, ADMIN), "admin as seat 0": Reader(url, ADMIN, seat=0)}
    play_pull_seat(live_server.url, match_id, token, moves=5)
    late = Reader(url)  # joins mid-match: gets the steps it missed first
    play_pull_seat(live_server.url, match_id, token)

    spectator = expected(api, match_id, None)
    assert as_dicts(readers["spectator"].result()) == spectator
    last = api.get(f"/matches/{match_id}").get_json()["step"]
    for name, seat in (("spectator", None), ("seat", PULL_SEAT)):
        query = "" if seat is None else f"?seat={seat}"
        final = api.get(f"/matches/{match_id}/replay/{last}{query}").get_json()["view"]
        assert whole_log(readers[name].result()) == final["log"]
    assert as_dicts(late.result()) == spectator
    assert as_dicts(readers["seat"].result()) == expected(api, match_id, PULL_SEAT,
                                                          updates=True)
    assert as_dicts(readers["admin"].result()) == expected(api, match_id, None, whole=True)
    assert as_dicts(readers["admin as seat 0"].result()) == expected(api, match_id, 0,
                                                                     whole=True)


def test_a_pull_seats_stream_carries_its_updates_with_the_clocks(live_server, api, workers,
                                                                random_bot_url):
    """Issue 26: on its own stream a pull seat hears each step it does not decide next, as
    a push bot with updates would, with the clocks the decisions carry."""
    workers.start_ready(1)
    match_id, token = start_match(api, random_bot_url, seed=12,
                                  time_control={"base_ms": 600_000, "increment_ms": 50})
    reader = Reader(f"{live_server.url}/matches/{match_id}/events", token)
    play_pull_seat(live_server.url, match_id, token, seed=12)
    got = as_dicts(reader.result())
    updates = [event for event in got if event["name"] == "update"]
    assert updates and all(update["data"]["clock"]["remaining_ms"][PULL_SEAT] > 0
                           for update in updates)
    assert got == expected(api, match_id, PULL_SEAT, updates=True)


def test_the_spectator_sees_no_action_and_a_seat_only_its_own(live_server, api, workers,
                                                               random_bot_url):
    workers.start_ready(1)
    match_id, token = start_match(api, random_bot_url, seed=8)
    url = f"{live_server.url}/matches/{match_id}/events"
    spectator, seat = Reader(url), Reader(url, token)
    play_pull_seat(live_server.url, match_id, token, seed=8)
    spectator_steps = [e.data for e in spectator.result() if e.name == "step"]
    seat_steps = [e.data for e in seat.result() if e.name == "step"]
    assert spectator_steps and all(step["played"]["action"] is None for step in spectator_steps)
    assert {step["played"]["seat"] for step in seat_steps} == {0, 1}
    for step in seat_steps:
        assert (step["played"]["action"] is not None) == (step["played"]["seat"] == PULL_SEAT)
    assert all("state" not in step for step in spectator_steps + seat_steps)


def test_last_event_id_resumes_without_gap_or_repeat(live_server, api, workers,
                                                     random_bot_url):
    workers.start_ready(1)
    match_id, token = start_match(api, random_bot_url, seed=5)
    url = f"{live_server.url}/matches/{match_id}/events"
    player = threading.Thread(target=play_pull_seat,
                              args=(live_server.url, match_id, token, None, 5), daemon=True)
    player.start()
    received: list[Event] = []
    last_id = None
    for cut in (3, 11, 20, None):  # disconnect after the step with that id, then resume
        stream = open_stream(url, token, resume_after=last_id)
        assert stream.response.status_code == 200, stream.response.text
        for event in stream.events():
            received.append(event)
            if cut is not None and event.id is not None and int(event.id) >= cut:
                break
        last_id = stream.last_id or last_id
        stream.close()
    player.join(WAIT_S)
    steps = [int(e.id) for e in received if e.name == "step"]
    assert steps == list(range(len(steps)))
    assert [e.name for e in received].count("start") == 1
    assert received[-1].name == "result" and received[-1].data["steps"] == len(steps)
    # an update has no id: one that followed a step the stream was cut after is not sent again
    wanted = expected(api, match_id, PULL_SEAT, updates=True)
    assert as_dicts([e for e in received if e.name != "update"]) == [
        e for e in wanted if e["name"] != "update"]
    updates = as_dicts([e for e in received if e.name == "update"])
    assert updates and all(update in wanted for update in updates)


def test_the_query_parameter_resumes_like_the_header(live_server, api, workers,
                                                     random_bot_url):
    workers.start_ready(1)
    match_id, token = start_match(api, random_bot_url, seed=9)
    play_pull_seat(live_server.url, match_id, token, seed=9)
    url = f"{live_server.url}/matches/{match_id}/events"
    whole = read_all(url)
    by_header = read_all(url, resume_after="6")
    by_query = read_all(url, last_event_id=6)
    assert as_dicts(by_header) == as_dicts(by_query) == as_dicts(whole[8:])
    assert by_header[0].id == "7"
