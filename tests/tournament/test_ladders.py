"""Ladders (issue 28) against the real stack: the API in this process, `referee worker`
processes, one Redis, bots of known strength over HTTP (tests/support/ladder_bots.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from itertools import combinations

import pytest
import redis

from tests.support.apitest import ADMIN
from tests.support.ladder_bots import STRENGTHS, LadderBots
from tests.support.waiting import wait_for
from tournament import ladder_upkeep, ladders
from tournament.store import Store


@pytest.fixture
def farm() -> Iterator[LadderBots]:
    server = LadderBots().start()
    yield server
    server.shutdown()
    server.server_close()


# ----- helpers -----------------------------------------------------------------------------

def signup(api, name: str) -> str:
    return account(api, name)[1]


def account(api, name: str) -> tuple[str, str]:
    """A new account made by the admin: its id and its first token."""
    response = api.post("/accounts", token=ADMIN, json={"name": name})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"], response.get_json()["token"]


def register(api, url: str, name: str, token: str = ADMIN) -> str:
    response = api.post("/bots", token=token, json={"name": name, "url": url,
                                                    "games": ["aladino"]})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def new_ladder(api, **fields) -> dict:
    body = {"name": "test ladder", "game": "aladino", "players": 3, "seed": 11,
            "deadline_ms": 5000, **fields}
    response = api.post("/ladders", token=ADMIN, json=body)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def enter(api, ladder_id: str, bot_id: str, token: str = ADMIN) -> dict:
    response = api.post(f"/ladders/{ladder_id}/entries", token=token, json={"bot": bot_id})
    assert response.status_code == 202, response.get_json()
    return response.get_json()


def entries(api, ladder_id: str) -> dict[str, dict]:
    listed = api.get(f"/ladders/{ladder_id}/entries?limit=200").get_json()["entries"]
    return {entry["bot"]: entry for entry in listed}


def entry_settled(api, ladder_id: str, bot_id: str) -> dict | None:
    entry = entries(api, ladder_id)[bot_id]
    return None if entry["status"] == ladders.CHECKING else entry


def ladder(api, ladder_id: str) -> dict:
    return api.get(f"/ladders/{ladder_id}").get_json()


def ladder_matches(api, ladder_id: str) -> list[dict]:
    page = api.get(f"/ladders/{ladder_id}/matches?limit=200").get_json()
    found, total = page["matches"], page["total"]
    for offset in range(200, total, 200):
        found += api.get(f"/ladders/{ladder_id}/matches?limit=200&offset={offset}"
                         ).get_json()["matches"]
    return found


def faulted(api, matches: list[dict]) -> str:
    """Each match in which a seat faulted or forfeited (from its replay): a line each."""
    lines = []
    for match in matches:
        steps = api.get(f"/matches/{match['id']}/replay").get_json()["steps"]
        faults = [(step["seat"], step["fault"]) for step in steps if step.get("fault")]
        if faults or match.get("forfeit"):
            lines.append(f"\n  {match['id']}: faults {faults}, forfeit {match.get('forfeit')}")
    return "".join(lines)


def shown(standings: list[dict]) -> str:
    """The standings, a line a bot: a failure's message shows a string whole (any other
    object is cut short, rows with it)."""
    return "".join(f"\n  {row['name']}: mu {row['mu']}, sigma {row['sigma']}, "
                   f"{row['matches']} matches, {row['status']}" for row in standings)


def kendall_tau(order: list[str], truth: dict[str, float]) -> float:
    """Kendall's tau of a standings order (best first) against the true strengths."""
    concordant = discordant = 0
    for a, b in combinations(order, 2):  # a is placed above b
        if truth[a] > truth[b]:
            concordant += 1
        elif truth[a] < truth[b]:
            discordant += 1
    pairs = len(order) * (len(order) - 1) / 2
    return (concordant - discordant) / pairs


# ----- the ladder at work --------------------------------------------------------------------
def test_a_ladder_of_bots_of_known_strength_orders_them_fairly(api, farm, workers):
    """Issue 28's acceptance: 8 bots (greedy with probability k/7) play a few hundred
    matches; the standings agree with the strengths (Kendall tau >= 0.8), matches per
    entry max/min <= 1.25, sigma shrinks, two bots of one owner never meet."""
    workers.start_ready(2)
    owner = signup(api, "owner-of-two")
    truth: dict[str, float] = {}
    mine: set[str] = set()
    for k in range(STRENGTHS):
        token = owner if k in (2, 5) else ADMIN
        bot = register(api, farm.url(f"/p/{k}"), f"p{k}", token)
        truth[bot] = k / 7
        if token == owner:
            mine.add(bot)
    made = new_ladder(api, concurrency=2)
    for bot in truth:
        enter(api, made["id"], bot, owner if bot in mine else ADMIN)
    wait_for(lambda: all(e["status"] == ladders.ACTIVE
                         for e in entries(api, made["id"]).values()), what="entries active")
    early = wait_for(lambda: (view := ladder(api, made["id"]))["counted"] >= 16 and view,
                     what="16 matches")
    wait_for(lambda: ladder(api, made["id"])["counted"] >= 300, timeout=900,
             what="300 matches")
    api.request("PATCH", f"/ladders/{made['id']}", token=ADMIN, json={"paused": True})
    wait_for(lambda: ladder(api, made["id"])["running"] == 0, what="running matches over")
    view = ladder(api, made["id"])
    order = [row["bot"] for row in view["standings"]]
    tau = kendall_tau(order, truth)
    matches = ladder_matches(api, made["id"])
    # played offline (engine, these bots, matchmaking and ratings; a match at a time), 200
    # ladders of this size never fell below 0.8 (2 pairs out of order at worst, 13 times):
    # a failure is likelier an event than chance, so it says which matches faulted
    assert tau >= 0.8, (f"tau {tau}; standings:{shown(view['standings'])}\n"
                        f"matches with faults:{faulted(api, matches) or ' none'}")
    assert [row["ordinal"] for row in view["standings"]] == sorted(
        (row["ordinal"] for row in view["standings"]), reverse=True)
    played = [row["matches"] for row in view["standings"]]
    assert max(played) / min(played) <= 1.25, shown(view["standings"])
    sigma_before = {row["bot"]: row["sigma"] for row in early["standings"]}
    assert all(row["sigma"] < sigma_before[row["bot"]] for row in view["standings"])
    assert len(matches) == view["scheduled"]
    for match in matches:
        seated = {seat["bot_id"] for seat in match["seats"]}
        assert len(seated & mine) <= 1, match["id"]
        assert len(seated) == 3
    counted = sum(1 for match in matches if match["status"] == "finished")
    assert counted == view["counted"]
    assert sum(played) == 3 * counted


def test_a_bot_that_answers_garbage_is_rejected_at_entry(api, farm, workers):
    workers.start_ready(1)
    bot = register(api, farm.url("/garbage"), "garbage")
    made = new_ladder(api)
    assert enter(api, made["id"], bot)["status"] == ladders.CHECKING
    entry = wait_for(lambda: entry_settled(api, made["id"], bot), what="the check")
    assert entry["status"] == ladders.REJECTED
    assert entry["reasons"] and all("malformed" in reason for reason in entry["reasons"])
    assert entry["version"] is None and ladder(api, made["id"])["standings"] == []
    notices = [p for p in farm.received["/garbage"] if p.get("type") == "notice"]
    wait_for(lambda: [p for p in farm.received["/garbage"] if p.get("type") == "notice"],
             what="the notice")
    notices = [p for p in farm.received["/garbage"] if p.get("type") == "notice"]
    assert notices[0] | {"reasons": None} == {
        "protocol": "referee/1", "type": "notice", "ladder_id": made["id"], "bot_id": bot,
        "status": ladders.REJECTED, "reasons": None}


def test_a_bot_that_crashes_every_few_decisions_is_suspended(api, farm, workers):
    workers.start_ready(1)
    crashy = register(api, farm.url("/crashy"), "crashy")
    others = [register(api, farm.url(f"/p/{k}"), f"p{k}") for k in (3, 4)]
    made = new_ladder(api, concurrency=1)
    for bot in [crashy, *others]:
        enter(api, made["id"], bot)
    wait_for(lambda: all(e["status"] == ladders.ACTIVE
                         for e in entries(api, made["id"]).values()), what="entries active")
    farm.crashing.set()
    entry = wait_for(lambda: (e := entries(api, made["id"])[crashy])["status"]
                     == ladders.SUSPENDED and e, what="the suspension")
    assert "faulted in 3 of its last" in entry["reasons"][0]
    assert entry["matches"] <= ladders.HEALTH_WINDOW
    wait_for(lambda: any(p.get("type") == "notice" and p["status"] == ladders.SUSPENDED
                         for p in farm.received["/crashy"]), what="the notice")
    scheduled = ladder(api, made["id"])["scheduled"]
    time.sleep(2)  # the two others alone cannot make a 3-player match
    assert ladder(api, made["id"])["scheduled"] == scheduled
    # entering again checks again
    farm.crashing.clear()
    assert enter(api, made["id"], crashy)["status"] == ladders.CHECKING
    assert wait_for(lambda: entry_settled(api, made["id"], crashy))["status"] == ladders.ACTIVE


def test_pausing_stops_new_matches_and_resuming_goes_on(api, farm, workers):
    workers.start_ready(1)
    bots = [register(api, farm.url(f"/p/{k}"), f"p{k}") for k in range(4)]
    made = new_ladder(api, players=2, concurrency=2)
    for bot in bots:
        enter(api, made["id"], bot)
    wait_for(lambda: ladder(api, made["id"])["counted"] >= 4, what="4 matches")
    paused = api.request("PATCH", f"/ladders/{made['id']}", token=ADMIN,
                         json={"paused": True})
    assert paused.status_code == 200 and paused.get_json()["paused"] is True
    wait_for(lambda: ladder(api, made["id"])["running"] == 0, what="running matches over")
    scheduled = ladder(api, made["id"])["scheduled"]
    time.sleep(3)
    assert ladder(api, made["id"])["scheduled"] == scheduled
    api.request("PATCH", f"/ladders/{made['id']}", token=ADMIN, json={"paused": False})
    wait_for(lambda: ladder(api, made["id"])["scheduled"] > scheduled, what="a new match")


def test_a_worker_killed_mid_ladder_loses_no_match_and_counts_none_twice(api, farm, workers,
                                                                          redis_url):
    first, _ = workers.start_ready(2)
    bots = [register(api, farm.url(f"/p/{k}"), f"p{k}") for k in range(6)]
    made = new_ladder(api, concurrency=3)
    for bot in bots:
        enter(api, made["id"], bot)
    wait_for(lambda: ladder(api, made["id"])["counted"] >= 6, what="6 matches")
    workers.kill(first)
    wait_for(lambda: ladder(api, made["id"])["counted"] >= 20, timeout=300,
             what="20 matches after the kill")
    api.request("PATCH", f"/ladders/{made['id']}", token=ADMIN, json={"paused": True})
    wait_for(lambda: ladder(api, made["id"])["running"] == 0, timeout=300,
             what="running matches over")
    view = ladder(api, made["id"])
    matches = ladder_matches(api, made["id"])
    assert len(matches) == view["scheduled"]
    assert all(match["status"] == "finished" for match in matches), [
        (m["id"], m["status"]) for m in matches if m["status"] != "finished"]
    assert view["counted"] == len(matches)
    assert sum(row["matches"] for row in view["standings"]) == 3 * len(matches)
    client = redis.Redis.from_url(redis_url)
    counted = client.scard(f"referee:ladder:{made['id']}:counted")
    client.close()
    assert counted == len(matches)


def test_a_new_version_plays_only_once_checked_and_the_old_one_meanwhile(api, farm, workers):
    workers.start_ready(1)
    bots = [register(api, farm.url(f"/p/{k}"), f"p{k}") for k in range(3)]
    made = new_ladder(api, players=2, concurrency=1)
    for bot in bots:
        enter(api, made["id"], bot)
    wait_for(lambda: ladder(api, made["id"])["counted"] >= 2, what="2 matches")
    changed = api.request("PATCH", f"/bots/{bots[0]}", token=ADMIN,
                          json={"url": farm.url("/garbage")})
    assert changed.status_code == 200
    entry = wait_for(lambda: (e := entries(api, made["id"])[bots[0]])["checking"] is None
                     and e, what="the new version's check")
    assert entry["status"] == ladders.ACTIVE and entry["version"] == 1
    assert "version 2 failed its entry check" in entry["reasons"][0]
    before = ladder(api, made["id"])["counted"]
    wait_for(lambda: ladder(api, made["id"])["counted"] >= before + 3, what="3 more matches")
    seats = [seat for match in ladder_matches(api, made["id"]) for seat in match["seats"]
             if seat["bot_id"] == bots[0]]
    assert {seat["version"] for seat in seats} == {1}
    api.request("PATCH", f"/bots/{bots[0]}", token=ADMIN, json={"url": farm.url("/p/6")})
    wait_for(lambda: entries(api, made["id"])[bots[0]]["version"] == 3, what="version 3 in play")
    # its matches count from 0 again: those it played at version 3, once the ladder is still
    # (with the bots replying at once, one may be counted before the entry is first read)
    api.request("PATCH", f"/ladders/{made['id']}", token=ADMIN, json={"paused": True})
    wait_for(lambda: ladder(api, made["id"])["running"] == 0, what="running matches over")
    entry = entries(api, made["id"])[bots[0]]
    played_at_3 = [match for match in ladder_matches(api, made["id"])
                   if match["status"] == "finished" and any(
                       seat["bot_id"] == bots[0] and seat["version"] == 3
                       for seat in match["seats"])]
    assert entry["status"] == ladders.ACTIVE and entry["version"] == 3
    assert entry["version_matches"] == len(played_at_3)


def test_the_bots_of_a_suspended_account_are_matched_no_more(api, farm, workers):
    """Issue 27's rule in the ladder: a suspended account's bots play no new match."""
    workers.start_ready(1)
    owner_id, token = account(api, "to-be-suspended")
    theirs = register(api, farm.url("/p/4"), "theirs", token)
    others = [register(api, farm.url(f"/p/{k}"), f"p{k}") for k in (2, 6)]
    made = new_ladder(api, players=2, concurrency=1)
    enter(api, made["id"], theirs, token)
    for bot in others:
        enter(api, made["id"], bot)
    wait_for(lambda: ladder(api, made["id"])["counted"] >= 3, what="3 matches")
    suspended = api.request("PATCH", f"/accounts/{owner_id}", token=ADMIN,
                            json={"suspended": True})
    assert suspended.status_code == 200
    time.sleep(0.5)  # a match may have been scheduled just before
    first_after = ladder(api, made["id"])["scheduled"] + 1
    wait_for(lambda: ladder(api, made["id"])["counted"] >= first_after + 3,
             what="3 more matches")
    newest_first = ladder_matches(api, made["id"])
    later = newest_first[:len(newest_first) - first_after]
    assert later and all(theirs not in {s["bot_id"] for s in m["seats"]} for m in later)


def test_an_entry_check_that_takes_too_long_is_a_rejection(api, python_bot, config,
                                                           redis_url, monkeypatch):
    """A bot answering just under its deadline holds a worker's checks for its whole
    budget at most (here 1 s), then is rejected saying so. Run as a worker runs it, in
    this process."""
    monkeypatch.setattr(ladder_upkeep, "CHECK_BUDGET_S", 1)

    def slow(observation, legal_actions):
        time.sleep(0.4)
        return legal_actions[0]

    async def in_thread(function, *args):
        return await asyncio.to_thread(function, *args)

    with python_bot(slow) as url:
        bot = register(api, url, "slowpoke")
        made = new_ladder(api, players=2)
        enter(api, made["id"], bot)
        store = Store.from_url(redis_url)
        assert asyncio.run(ladder_upkeep.run_checks(store, config, in_thread)) == 1
    entry = entries(api, made["id"])[bot]
    assert entry["status"] == ladders.REJECTED
    assert entry["reasons"] == ["the entry check took longer than 1 s in all: the bot "
                                "answers too slowly to be checked"]


# ----- the API's refusals ----------------------------------------------------------------------
def test_only_a_bots_owner_or_the_admin_enters_it(api, farm):
    alice, bob = signup(api, "alice"), signup(api, "bob")
    hers = register(api, farm.url("/p/1"), "hers", alice)
    made = new_ladder(api)
    refused = api.post(f"/ladders/{made['id']}/entries", token=bob, json={"bot": hers})
    assert refused.status_code == 403
    assert api.post(f"/ladders/{made['id']}/entries", json={"bot": hers}).status_code == 401
    assert enter(api, made["id"], hers, alice)["status"] == ladders.CHECKING
    assert api.request("DELETE", f"/ladders/{made['id']}/entries/{hers}",
                       token=bob).status_code == 403
    left = api.request("DELETE", f"/ladders/{made['id']}/entries/{hers}", token=alice)
    assert left.status_code == 200 and left.get_json()["status"] == ladders.LEFT
    assert api.post("/ladders", token=alice, json={"game": "aladino"}).status_code == 403


def test_bad_ladder_requests_get_a_problem_naming_the_field(api, farm):
    def problem(response, status: int, field: str | None = None) -> None:
        assert response.status_code == status, response.get_json()
        if field:
            assert field in str(response.get_json()), response.get_json()

    problem(api.post("/ladders", token=ADMIN, json={"game": "chess"}), 400, "game")
    problem(api.post("/ladders", token=ADMIN, json={"game": "aladino", "players": 1}), 400,
            "players")
    problem(api.post("/ladders", token=ADMIN, json={"game": "aladino", "concurrency": 0}),
            400, "concurrency")
    problem(api.post("/ladders", token=ADMIN, json={"game": "aladino", "players": 9}), 422,
            "players")
    problem(api.get("/ladders/l-nope"), 404)
    made = new_ladder(api)
    problem(api.post(f"/ladders/{made['id']}/entries", token=ADMIN, json={"bot": "b-nope"}),
            422, "bot")
    caravans = api.post("/bots", token=ADMIN, json={"name": "caravaner", "url": farm.url("/p/1"),
                                                    "games": ["caravans"]}).get_json()["id"]
    problem(api.post(f"/ladders/{made['id']}/entries", token=ADMIN, json={"bot": caravans}),
            422, "bot")
    problem(api.request("DELETE", f"/ladders/{made['id']}/entries/{caravans}", token=ADMIN),
            404)
    problem(api.request("PATCH", f"/ladders/{made['id']}", token=ADMIN,
                        json={"paused": "yes"}), 400, "paused")
    listed = api.get("/ladders").get_json()
    assert listed["total"] == 1 and listed["ladders"][0]["id"] == made["id"]


def test_a_new_version_does_not_bring_back_an_entry_that_left_meanwhile(api, farm,
                                                                        monkeypatch):
    """A bot's new version re-enters only the entries still checking or active, read in the
    entering transaction. Before, the entry was read first: a leave between that read and
    the transaction came back `checking` (12 in 200 PATCH/DELETE races, a helper's audit);
    here the read before the leave is replayed."""
    bot = register(api, farm.url("/p/1"), "leaver")
    made = new_ladder(api)
    enter(api, made["id"], bot, ADMIN)
    store = api.app.extensions["referee"].store
    entered = store.ladder_entry(made["id"], bot)
    left = api.request("DELETE", f"/ladders/{made['id']}/entries/{bot}", token=ADMIN)
    assert left.status_code == 200
    monkeypatch.setattr(store, "ladder_entry", lambda ladder_id, bot_id: entered)
    ladders.new_version(store, {**store.get_bot(bot), "version": 2})
    monkeypatch.undo()
    assert store.ladder_entry(made["id"], bot)["status"] == ladders.LEFT
