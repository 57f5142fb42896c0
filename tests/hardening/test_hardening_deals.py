"""Issue 14, item 5: the seed of a running match is never public.

The seat rotations of a tournament combination share one deal (one seed). Before the fix, a
finished rotation showed its seed (and its replay) to anyone while its sibling was still
being played, so the sibling's deck and hidden cards could be computed. Played here through
`referee serve` (gunicorn), real `referee worker` processes and a real HTTP bot: both seats
are the `/gate` bot, whose first decision at step 3 (of whichever match gets there first)
waits until the test opens the gate, so one rotation stays running while the other
finishes. Anonymous clients must not see the finished rotation's seed, nor its replay,
until the gate opens and the sibling is over; the admin sees it all along.
"""

from __future__ import annotations

import time

import requests

from tests.support.apitest import ADMIN

ADMIN_HEADERS = {"Authorization": f"Bearer {ADMIN}"}


def start_tournament(base: str, bots: list[str], deals: str) -> dict:
    created = requests.post(f"{base}/tournaments", headers=ADMIN_HEADERS, timeout=10, json={
        "game": "aladino", "bots": bots, "seed": 2024, "deals": deals,
        "deadline_ms": 60000})
    assert created.status_code == 201, created.text
    return created.json()


def register(base: str, url: str, name: str) -> str:
    created = requests.post(f"{base}/bots", headers=ADMIN_HEADERS, timeout=10,
                            json={"name": name, "url": url, "games": ["aladino"]})
    assert created.status_code == 201, created.text
    return created.json()["id"]


def one_finished_one_held(base: str, match_ids: list[str]) -> tuple[dict, dict]:
    """Wait (as the admin) until one rotation finished while the other is held at the gate."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        matches = [requests.get(f"{base}/matches/{m}", headers=ADMIN_HEADERS, timeout=10).json()
                   for m in match_ids]
        finished = [m for m in matches if m["status"] == "finished"]
        if len(finished) == 1:
            (held,) = [m for m in matches if m["status"] != "finished"]
            return finished[0], held
        assert len(finished) < 2, "the gate held no match"
        time.sleep(0.1)
    raise AssertionError(f"no rotation finished: {matches}")


def anonymous_views(base: str, match_id: str) -> dict:
    listed = requests.get(f"{base}/matches", timeout=10).json()["matches"]
    return {
        "list": next(m for m in listed if m["id"] == match_id)["seed"],
        "match": requests.get(f"{base}/matches/{match_id}", timeout=10).json()["seed"],
        "replay": requests.get(f"{base}/matches/{match_id}/replay", timeout=10).status_code,
        "step": requests.get(f"{base}/matches/{match_id}/replay/0?seat=1",
                             timeout=10).status_code,
    }


def wait_tournament(base: str, tournament_id: str) -> dict:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        view = requests.get(f"{base}/tournaments/{tournament_id}", timeout=10).json()
        if view["status"] == "finished":
            return view
        time.sleep(0.1)
    raise AssertionError(f"tournament {tournament_id} did not finish: {view}")


def test_a_finished_rotation_hides_its_seed_until_its_sibling_is_over(live_server, bad_bots,
                                                                      workers):
    base = live_server.url
    bots = [register(base, bad_bots.url("/gate"), name) for name in ("north", "south")]
    tournament = start_tournament(base, bots, "paired")
    workers.start(2)
    finished, held = one_finished_one_held(base, tournament["matches"])
    assert finished["seed"] == held["seed"], "paired deals: both rotations share the seed"
    assert anonymous_views(base, finished["id"]) == {
        "list": None, "match": None, "replay": 401, "step": 401}
    assert anonymous_views(base, held["id"])["match"] is None
    admin_replay = requests.get(f"{base}/matches/{finished['id']}/replay",
                                headers=ADMIN_HEADERS, timeout=10)
    assert admin_replay.status_code == 200 and admin_replay.json()["seed"] == held["seed"]
    bad_bots.gate.set()
    view = wait_tournament(base, tournament["id"])
    assert view["seed"] == 2024
    for match_id in tournament["matches"]:
        shown = anonymous_views(base, match_id)
        assert shown["list"] == shown["match"] == finished["seed"]
        assert shown["replay"] == shown["step"] == 200


def test_independent_deals_show_a_finished_match_s_own_seed_at_once(live_server, bad_bots,
                                                                    workers):
    base = live_server.url
    bots = [register(base, bad_bots.url("/gate"), name) for name in ("east", "west")]
    tournament = start_tournament(base, bots, "independent")
    workers.start(2)
    finished, held = one_finished_one_held(base, tournament["matches"])
    assert finished["seed"] != held["seed"], "independent deals: a seed per match"
    shown = anonymous_views(base, finished["id"])
    assert shown == {"list": finished["seed"], "match": finished["seed"], "replay": 200,
                     "step": 200}
    assert anonymous_views(base, held["id"])["match"] is None
    bad_bots.gate.set()
    wait_tournament(base, tournament["id"])
