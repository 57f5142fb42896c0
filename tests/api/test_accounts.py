"""Accounts (issue 27) through the API on the real Redis: sign-up modes, tokens and scopes,
three accounts each doing everything with its own bots and nothing with another's,
challenges, versions, quotas (429 exactly at the limit, recovering after Retry-After),
suspension and deletion. Every answer is checked against openapi.yaml."""

from __future__ import annotations

import dataclasses
import threading
import time

import pytest
import requests

from referee.config import Quotas
from tests.support.apitest import ADMIN
from tournament.store.keys import matches_key, tournaments_key

ALL = ["bots:write", "matches:write", "tournaments:write", "private:read"]


@pytest.fixture
def config_overrides() -> dict:
    return {"quotas": Quotas(bots=3, matches_per_day=4, concurrent_matches=3,
                             tournaments_per_day=1, tokens=4, day_s=2)}


def settings(api, **changes) -> None:
    """Change the running app's settings (as a restart with other variables would)."""
    services = api.app.extensions["referee"]
    services.config = dataclasses.replace(services.config, **changes)


def signup(api, name: str, token: str | None = ADMIN, **extra) -> tuple[str, str]:
    """A new account (by the admin unless said otherwise): (its id, its first token)."""
    response = api.post("/accounts", token=token, json={"name": name, **extra})
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert set(body) >= {"id", "name", "token"} and len(body["token"]) >= 32
    return body["id"], body["token"]


def scoped(api, token: str, *scopes: str) -> str:
    response = api.post("/accounts/me/tokens", token=token, json={"scopes": list(scopes)})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["token"]


def new_bot(api, token: str, url: str, name: str, **extra) -> dict:
    response = api.post("/bots", token=token, json={"name": name, "url": url,
                                                    "games": ["aladino"], **extra})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def problem(response, status: int, slug: str) -> dict:
    assert response.status_code == status, response.get_json()
    body = response.get_json()
    assert body["type"] == f"/problems/{slug}", body
    return body


# ----- sign-up ---------------------------------------------------------------------------
def test_closed_sign_up_is_the_admins_only(api):
    assert api.post("/accounts", json={"name": "anon"}).status_code == 401
    problem(api.post("/accounts", token="a-guess", json={"name": "anon"}), 403,
            "account/signup-refused")
    account_id, token = signup(api, "first")
    me = api.get("/accounts/me", token=token).get_json()
    assert me["id"] == account_id and me["name"] == "first" and me["suspended"] is False
    assert me["quotas"]["bots"] == {"limit": 3, "used": 0, "remaining": 3}
    problem(api.post("/accounts", token=ADMIN, json={"name": "FIRST"}), 409,
            "account/name-taken")


def test_invite_sign_up_takes_a_one_time_code(api):
    settings(api, signup="invite")
    problem(api.post("/accounts", json={"name": "guest"}), 403, "account/signup-refused")
    assert api.post("/invites").status_code == 401
    invite = api.post("/invites", token=ADMIN)
    assert invite.status_code == 201
    code = invite.get_json()["code"]
    signup(api, "guest", token=None, invite=code)
    problem(api.post("/accounts", json={"name": "guest2", "invite": code}), 403,
            "account/signup-refused")


def test_a_sign_up_refused_for_its_name_keeps_its_invite_code(api):
    """A code spent on a name already taken is given back, with the life it had left, for a
    try with another name; it is still used once. (Before: the 409 spent it.)"""
    settings(api, signup="invite")
    signup(api, "taken")
    code = api.post("/invites", token=ADMIN).get_json()["code"]
    problem(api.post("/accounts", json={"name": "TAKEN", "invite": code}), 409,
            "account/name-taken")
    signup(api, "free", token=None, invite=code)
    problem(api.post("/accounts", json={"name": "free2", "invite": code}), 403,
            "account/signup-refused")


@pytest.mark.parametrize("name", ["bob\n", "bob\r", " bob", "bob:x", "", "b" * 65])
def test_an_account_name_is_letters_digits_and_punctuation_only(api, name):
    """`"bob\\n"` was taken beside `"bob"` (Python's `$` matches before a final newline)."""
    signup(api, "bob")
    problem(api.post("/accounts", token=ADMIN, json={"name": name}), 400, "request/invalid")


def test_open_sign_up_is_limited_per_client_address(api):
    settings(api, signup="open", signup_rate=(2, 60))
    signup(api, "one", token=None)
    signup(api, "two", token=None)
    refused = problem(api.post("/accounts", json={"name": "three"}), 429,
                      "account/rate-limited")
    assert int(api.post("/accounts", json={"name": "three"}).headers["Retry-After"]) >= 1
    assert "per 60 s" in refused["detail"]


# ----- tokens and scopes -----------------------------------------------------------------
def test_tokens_have_subsets_of_their_makers_scopes_and_revoking_one_is_at_once(api):
    _, first = signup(api, "holder")
    listed = api.get("/accounts/me/tokens", token=first).get_json()["tokens"]
    assert [sorted(t["scopes"]) for t in listed] == [sorted(ALL)]
    assert all("token" not in t for t in listed)
    made = api.post("/accounts/me/tokens", token=first,
                    json={"scopes": ["bots:write"], "expires_in_s": 3600}).get_json()
    assert made["scopes"] == ["bots:write"] and made["expires_at"]
    narrow = made["token"]
    wider = problem(api.post("/accounts/me/tokens", token=narrow,
                             json={"scopes": ["bots:write", "private:read"]}), 403,
                    "auth/scope-missing")
    assert wider["scope"] == "private:read"
    assert api.get("/accounts/me", token=narrow).status_code == 200
    revoked = api.request("DELETE", f"/accounts/me/tokens/{made['id']}", token=first)
    assert revoked.status_code == 200 and revoked.get_json()["id"] == made["id"]
    assert api.get("/accounts/me", token=narrow).status_code == 403
    assert api.request("DELETE", f"/accounts/me/tokens/{made['id']}",
                       token=first).status_code == 404
    problem(api.post("/accounts/me/tokens", token=first, json={"scopes": ["root"]}), 400,
            "request/invalid")


def test_an_expired_token_grants_nothing(api):
    _, first = signup(api, "brief")
    made = api.post("/accounts/me/tokens", token=first,
                    json={"scopes": ["bots:write"], "expires_in_s": 1}).get_json()
    assert api.get("/accounts/me", token=made["token"]).status_code == 200
    time.sleep(1.5)
    assert api.get("/accounts/me", token=made["token"]).status_code == 403


WRITES = [  # (method, path template, body, the scopes it needs)
    ("POST", "/bots", {"name": "scoped {n}", "url": "{url}", "games": ["aladino"]},
     {"bots:write"}),
    ("PATCH", "/bots/{bot}", {"updates": True}, {"bots:write"}),
    ("POST", "/bots/{bot}/secret", None, {"bots:write", "private:read"}),
    ("DELETE", "/bots/{bot}", None, {"bots:write"}),
    ("POST", "/matches", {"game": "aladino", "seats": [{"kind": "bot", "bot_id": "{bot}"},
                                                       {"kind": "pull"}]}, {"matches:write"}),
    ("POST", "/tournaments", {"game": "aladino", "bots": ["{bot}", "{other}"], "players": 2},
     {"tournaments:write"}),
]


def fill(value, **names):
    if isinstance(value, str):
        return value.format(**names)
    if isinstance(value, list):
        return [fill(item, **names) for item in value]
    if isinstance(value, dict):
        return {key: fill(item, **names) for key, item in value.items()}
    return value


@pytest.mark.parametrize("scope", ALL)
def test_every_write_needs_its_scope(api, bot_server, scope):
    """A token of one scope: each write endpoint it does not cover is a 403 naming the
    scope needed; each it covers is not refused for scopes."""
    _, first = signup(api, "table")
    token = scoped(api, first, scope)
    for n, (method, path, body, needs) in enumerate(WRITES):
        names = {"n": n, "url": bot_server.url("/random"),
                 "bot": new_bot(api, first, bot_server.url("/random"), f"own {n}")["id"],
                 "other": new_bot(api, ADMIN, bot_server.url("/random"), f"other {n}")["id"]}
        kwargs = {} if body is None else {"json": fill(body, **names)}
        response = api.request(method, fill(path, **names), token=token, **kwargs)
        if needs <= {scope}:
            assert response.status_code < 400, (method, path, response.get_json())
        else:
            refused = problem(response, 403, "auth/scope-missing")
            assert refused["scope"] in needs - {scope}
        if method == "POST" and path == "/bots" and response.status_code == 201:
            api.request("DELETE", f"/bots/{response.get_json()['id']}", token=first)
        for bot in (names["bot"], names["other"]):  # stay within the bots quota
            api.request("DELETE", f"/bots/{bot}", token=ADMIN)


# ----- ownership -------------------------------------------------------------------------
def test_three_accounts_each_do_everything_with_their_own_bots_and_nothing_with_others(
        api, bot_server):
    accounts = {name: signup(api, name)[1] for name in ("ann", "bob", "cy")}
    bots = {name: new_bot(api, token, bot_server.url("/random"), f"{name}'s bot")
            for name, token in accounts.items()}
    for name, token in accounts.items():
        mine = bots[name]
        assert mine["owner"] and mine["url"] == bot_server.url("/random") and mine["secret"]
        changed = api.request("PATCH", f"/bots/{mine['id']}", token=token,
                              json={"url": bot_server.url("/first")})
        assert changed.status_code == 200 and changed.get_json()["version"] == 2
        versions = api.get(f"/bots/{mine['id']}/versions", token=token).get_json()["versions"]
        assert [(v["version"], v["url"]) for v in versions] == [
            (1, bot_server.url("/random")), (2, bot_server.url("/first"))]
        rotated = api.post(f"/bots/{mine['id']}/secret", token=token)
        assert rotated.status_code == 200 and rotated.get_json()["secret"] != mine["secret"]
        for other, other_token in accounts.items():
            if other == name:
                continue
            path = f"/bots/{mine['id']}"
            seen = api.get(path, token=other_token).get_json()
            assert "url" not in seen and "secret" not in seen and seen["owner"] == mine["owner"]
            assert all("url" not in v for v in seen["versions"]) and len(seen["versions"]) == 2
            shown = api.get(f"{path}/versions", token=other_token).get_json()["versions"]
            assert [v["version"] for v in shown] == [1, 2] and all("url" not in v for v in shown)
            for method, suffix, body in (("PATCH", "", {"name": "mine now"}),
                                         ("DELETE", "", None), ("POST", "/secret", None)):
                kwargs = {} if body is None else {"json": body}
                refused = api.request(method, path + suffix, token=other_token, **kwargs)
                assert refused.status_code == 403, (method, suffix)
                assert bot_server.url("/") not in refused.get_data(as_text=True)
        listed = api.get("/bots", token=token).get_json()["bots"]
        assert {bot["id"] for bot in listed if "url" in bot} == {mine["id"]}
        assert api.request("DELETE", f"/bots/{mine['id']}", token=token).status_code == 200
    anonymous = api.get("/bots").get_json()["bots"]
    assert anonymous and all("url" not in bot for bot in anonymous)


def test_without_private_read_even_the_owner_sees_no_url_or_secret(api, bot_server):
    _, first = signup(api, "careful")
    writer = scoped(api, first, "bots:write")
    made = new_bot(api, writer, bot_server.url("/random"), "hidden")
    assert "url" not in made and "secret" not in made
    assert "url" not in api.get(f"/bots/{made['id']}", token=writer).get_json()
    problem(api.post(f"/bots/{made['id']}/secret", token=writer), 403, "auth/scope-missing")
    assert api.get(f"/bots/{made['id']}", token=first).get_json()["url"]


# ----- challenges ------------------------------------------------------------------------
def test_an_account_seats_its_own_bots_and_public_ones(api, bot_server, run_worker):
    _, ann = signup(api, "ann")
    _, bob = signup(api, "bob")
    own = new_bot(api, ann, bot_server.url("/random"), "ann 1")["id"]
    public = new_bot(api, bob, bot_server.url("/random"), "bob public")["id"]
    private = new_bot(api, bob, bot_server.url("/random"), "bob private", public=False)["id"]
    seats = [{"kind": "bot", "bot_id": own}, {"kind": "bot", "bot_id": public}]
    match = api.post("/matches", token=ann, json={"game": "aladino", "seats": seats})
    assert match.status_code == 201, match.get_json()
    assert [seat.get("version") for seat in match.get_json()["seats"]] == [1, 1]
    problem(api.post("/matches", token=ann, json={"game": "aladino", "seats": [
        {"kind": "bot", "bot_id": own}, {"kind": "bot", "bot_id": private}]}), 403,
        "bot/not-public")
    problem(api.post("/matches", token=ann, json={"game": "aladino", "seats": [
        {"kind": "bot", "bot_id": public}, {"kind": "bot", "bot_id": public}]}), 403,
        "auth/forbidden")
    with_pull = api.post("/matches", token=ann, json={"game": "aladino", "seats": [
        {"kind": "pull"}, {"kind": "bot", "bot_id": public}], "pull_deadline_ms": 1000})
    assert with_pull.status_code == 201 and with_pull.get_json()["tokens"]
    problem(api.post("/tournaments", token=ann, json={
        "game": "aladino", "bots": [own, private], "players": 2}), 403, "bot/not-public")
    api.request("PATCH", f"/bots/{own}", token=ann, json={"url": bot_server.url("/first")})
    run_worker()
    record = api.get(f"/matches/{match.get_json()['id']}/replay").get_json()
    assert [seat.get("version") for seat in record["seats"]] == [1, 1], "as when created"
    asked = [r for r in bot_server.received["/first"] if r["match_id"] == record["match_id"]]
    assert not asked, "version 1 played at its own URL"


# ----- quotas ----------------------------------------------------------------------------
def test_quotas_answer_429_exactly_at_the_limit_and_recover_after_retry_after(api,
                                                                             bot_server):
    _, token = signup(api, "busy")
    bots = [new_bot(api, token, bot_server.url("/random"), f"busy {n}")["id"] for n in range(3)]
    over = problem(api.post("/bots", token=token, json={
        "name": "busy 3", "url": bot_server.url("/random"), "games": ["aladino"]}), 429,
        "quota/exceeded")
    assert (over["quota"], over["limit"], over["remaining"]) == ("bots", 3, 0)
    api.request("DELETE", f"/bots/{bots[0]}", token=token)
    new_bot(api, token, bot_server.url("/random"), "busy 3")
    seats = [{"kind": "pull"}, {"kind": "bot", "bot_id": bots[1]}]
    body = {"game": "aladino", "seats": seats, "pull_deadline_ms": 600000}
    for _ in range(3):
        assert api.post("/matches", token=token, json=body).status_code == 201
    held = problem(api.post("/matches", token=token, json=body), 429, "quota/exceeded")
    assert held["quota"] == "concurrent_matches" and held["limit"] == 3
    settings(api, quotas=Quotas(bots=3, matches_per_day=4, concurrent_matches=10,
                                tournaments_per_day=1, tokens=4, day_s=2))
    daily = api.post("/matches", token=token, json=body)
    if daily.status_code == 201:  # the 4th of a day; a new day may have begun already
        daily = api.post("/matches", token=token, json=body)
    while daily.status_code == 201:  # the day turned between the requests: fill the new one
        daily = api.post("/matches", token=token, json=body)
    refused = problem(daily, 429, "quota/exceeded")
    assert refused["quota"] == "matches_per_day" and refused["remaining"] == 0
    retry_s = int(daily.headers["Retry-After"])
    assert 1 <= retry_s <= 2
    time.sleep(retry_s)
    assert api.post("/matches", token=token, json=body).status_code == 201
    me = api.get("/accounts/me", token=token).get_json()
    assert me["quotas"]["matches_per_day"]["used"] >= 1


def test_the_tokens_quota_counts_live_tokens(api):
    _, first = signup(api, "keys")
    made = [api.post("/accounts/me/tokens", token=first, json={"scopes": ["bots:write"]})
            for _ in range(3)]
    assert all(response.status_code == 201 for response in made)
    over = problem(api.post("/accounts/me/tokens", token=first,
                            json={"scopes": ["bots:write"]}), 429, "quota/exceeded")
    assert over["quota"] == "tokens" and over["limit"] == 4
    api.request("DELETE", f"/accounts/me/tokens/{made[0].get_json()['id']}", token=first)
    assert api.post("/accounts/me/tokens", token=first,
                    json={"scopes": ["bots:write"]}).status_code == 201


# ----- suspension and deletion -----------------------------------------------------------
def test_a_suspended_account_loses_its_tokens_and_its_bots_play_nothing_new(api, bot_server):
    account_id, token = signup(api, "naughty")
    bot = new_bot(api, token, bot_server.url("/random"), "naughty bot")["id"]
    other = api.register_bot(bot_server.url("/random"), ["aladino"], name="house")
    problem(api.request("PATCH", f"/accounts/{account_id}", token=ADMIN,
                        json={"suspended": 1}), 400, "request/invalid")  # true or false only
    suspended = api.request("PATCH", f"/accounts/{account_id}", token=ADMIN,
                            json={"suspended": True})
    assert suspended.status_code == 200 and suspended.get_json()["suspended"] is True
    assert api.get("/accounts/me", token=token).status_code == 403
    for path in ("/bots", f"/bots/{bot}", f"/bots/{bot}/versions"):
        problem(api.get(path, token=token), 403, "auth/forbidden")  # the spec says 403 too
    seats = [{"kind": "bot", "bot_id": bot}, {"kind": "bot", "bot_id": other}]
    problem(api.post("/matches", token=ADMIN, json={"game": "aladino", "seats": seats}), 409,
            "bot/owner-suspended")
    api.request("PATCH", f"/accounts/{account_id}", token=ADMIN, json={"suspended": False})
    assert api.get("/accounts/me", token=token).status_code == 200
    deleted = api.request("DELETE", f"/accounts/{account_id}", token=ADMIN)
    assert deleted.status_code == 200
    assert api.get("/accounts/me", token=token).status_code == 403
    assert api.get(f"/accounts/{account_id}", token=ADMIN).status_code == 404
    listed = {b["id"]: b for b in api.get("/bots").get_json()["bots"]}
    assert listed[bot]["retired_at"], "its bots are retired; their history stays"


def test_only_the_admin_manages_accounts(api):
    account_id, token = signup(api, "plain")
    for method, path, body in (("GET", "/accounts", None),
                               ("GET", f"/accounts/{account_id}", None),
                               ("PATCH", f"/accounts/{account_id}", {"suspended": True}),
                               ("DELETE", f"/accounts/{account_id}", None),
                               ("POST", "/invites", None)):
        kwargs = {} if body is None else {"json": body}
        assert api.request(method, path, token=token, **kwargs).status_code == 403
        assert api.request(method, path, **kwargs).status_code == 401
    page = api.get("/accounts", token=ADMIN).get_json()
    assert page["total"] == 1 and page["accounts"][0]["id"] == account_id


def test_a_revoked_token_fails_in_another_api_process_at_once(api, live_server):
    """Revoked through this app; `referee serve` (another process, gunicorn) refuses it at
    its next request: nothing about tokens is cached anywhere."""
    _, first = signup(api, "roamer")
    made = api.post("/accounts/me/tokens", token=first,
                    json={"scopes": ["matches:write"]}).get_json()
    other = f"{live_server.url}/accounts/me"
    auth = {"Authorization": f"Bearer {made['token']}"}
    assert requests.get(other, headers=auth, timeout=30).status_code == 200
    api.request("DELETE", f"/accounts/me/tokens/{made['id']}", token=first)
    refused = requests.get(other, headers=auth, timeout=30)
    assert refused.status_code == 403
    assert refused.headers["Content-Type"].startswith("application/problem+json")


def test_an_account_cannot_revoke_or_list_another_accounts_tokens(api):
    _, ann = signup(api, "ann")
    _, bob = signup(api, "bob")
    made = api.post("/accounts/me/tokens", token=ann, json={"scopes": ["bots:write"]}).get_json()
    assert api.request("DELETE", f"/accounts/me/tokens/{made['id']}",
                       token=bob).status_code == 404
    assert api.get("/accounts/me", token=made["token"]).status_code == 200, "still live"
    listed = api.get("/accounts/me/tokens", token=bob).get_json()["tokens"]
    assert made["id"] not in {token["id"] for token in listed} and len(listed) == 1


# ----- requests at once ---------------------------------------------------------------
def at_once(api, count: int, method: str, path: str, token: str, body) -> list[int]:
    """The statuses, sorted, of `count` such requests sent at once (`together`), the i-th
    with `body(i)`: a check and its write must not interleave."""
    return sorted(answer.status_code for answer in together(
        api, *((method, path, token, body(index)) for index in range(count))))


def test_quotas_and_bot_names_hold_for_requests_sent_at_once(api, bot_server):
    """Before, each request checked then wrote, and requests at once passed the check
    together: 15 bots held against a quota of 10, 24 tokens against 20, 25 matches against
    20, 7 bots of one name (from a helper's audit over HTTP)."""
    settings(api, quotas=Quotas(bots=3, tokens=4, concurrent_matches=3))
    _, token = signup(api, "hasty")
    url = bot_server.url("/random")
    assert at_once(api, 10, "POST", "/bots", token, lambda i: {
        "name": f"hasty-{i}", "url": url, "games": ["aladino"]}) == [201] * 3 + [429] * 7
    assert at_once(api, 10, "POST", "/accounts/me/tokens", token, lambda i: {
        "scopes": ["bots:write"]}) == [201] * 3 + [429] * 7  # its first token is one
    assert at_once(api, 10, "POST", "/matches", token, lambda i: {
        "game": "aladino", "seats": [{"kind": "pull"}, {"kind": "pull"}]}
    ) == [201] * 3 + [429] * 7
    assert at_once(api, 8, "POST", "/bots", ADMIN, lambda i: {
        "name": "Twin", "url": url, "games": ["aladino"]}) == [201] + [409] * 7


def together(api, *requests: tuple[str, str, str, dict | None]) -> list:
    """The answers to (method, path, token, body) requests sent at once, one a thread."""
    barrier = threading.Barrier(len(requests))
    answers: dict[int, object] = {}

    def send(index: int) -> None:
        method, path, token, body = requests[index]
        client = api.app.test_client()
        barrier.wait()
        answers[index] = client.open(path, method=method, json=body, headers={
            "Authorization": f"Bearer {token}"})

    threads = [threading.Thread(target=send, args=(index,)) for index in range(len(requests))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [answers[index] for index in range(len(requests))]


def test_changes_to_a_bot_at_once_never_write_over_each_other(api, bot_server):
    """A bot's record is read, changed and written under its lock. Before (a helper's audit,
    over HTTP): a PATCH beside a DELETE un-retired the bot 14 times in 30, a rotation beside
    a PATCH lost the new secret 8 in 20, an account deleted beside a bot's registration left
    that bot playing 19 in 20."""
    url, store = bot_server.url("/random"), api.app.extensions["referee"].store
    for attempt in range(8):
        account_id, token = signup(api, f"racer{attempt}")
        bot = new_bot(api, token, url, f"racer bot {attempt}")["id"]
        patched, retired = together(api, ("PATCH", f"/bots/{bot}", token, {"updates": True}),
                                    ("DELETE", f"/bots/{bot}", token, None))
        assert retired.status_code == 200 and store.get_bot(bot).get("retired_at")
        other = new_bot(api, token, url, f"second racer bot {attempt}")["id"]
        hidden, rotated = together(
            api, ("PATCH", f"/bots/{other}", token, {"public": False}),
            ("POST", f"/bots/{other}/secret", token, None))
        kept = store.get_bot(other)
        assert hidden.status_code == rotated.status_code == 200
        assert not kept["public"] and kept["secret"] == rotated.get_json()["secret"], kept
        deleted, _ = together(api, ("DELETE", f"/accounts/{account_id}", ADMIN, None),
                              ("POST", "/bots", token, {"name": f"late bot {attempt}",
                                                        "url": url, "games": ["aladino"]}))
        assert deleted.status_code == 200
        live = [bot for bot in store.list_bots()
                if bot.get("owner") == account_id and not bot.get("retired_at")]
        assert live == [], live


def test_an_account_suspended_while_a_match_seats_its_bot_plays_no_match_stored_after(
        api, bot_server, monkeypatch):
    """A suspension is written under the locks of the account's bots, which a match's
    creation holds from its check to its store: the match is stored before the suspension,
    or refused (409). Before, the check, then the suspension, then the match (1 in 30 over
    HTTP, an audit)."""
    store = api.app.extensions["referee"].store
    stored_before: list[set[bytes]] = []
    real_update = store.update_account

    def update_account(account: dict) -> None:  # what was stored when it is suspended
        if account.get("suspended"):
            stored_before.append(set(store.redis.zrange(matches_key(), 0, -1)))
        real_update(account)

    monkeypatch.setattr(store, "update_account", update_account)
    url, house = bot_server.url("/random"), api.register_bot(bot_server.url("/random"),
                                                              name="house")
    for attempt in range(15):
        account_id, token = signup(api, f"suspect{attempt}")
        bot = new_bot(api, token, url, f"suspect bot {attempt}")["id"]
        seats = [{"kind": "bot", "bot_id": bot}, {"kind": "bot", "bot_id": house}]
        *made, suspended = together(
            api, *[("POST", "/matches", ADMIN, {"game": "aladino", "seats": seats})] * 3,
            ("PATCH", f"/accounts/{account_id}", ADMIN, {"suspended": True}))
        assert suspended.status_code == 200
        for match in made:
            assert match.status_code in (201, 409), match.get_json()
            if match.status_code == 201:
                assert match.get_json()["id"].encode() in stored_before[-1], attempt


def test_a_token_made_while_its_account_is_deleted_leaves_no_record(api):
    """The account's tokens are deleted under its tokens lock, which making one holds, and
    a token is only made for an account that still exists. Before, a token made between the
    deletion's read of the tokens and its delete was left in Redis for good."""
    store = api.app.extensions["referee"].store
    for attempt in range(15):
        account_id, token = signup(api, f"leaver{attempt}")
        deleted, *made = together(
            api, ("DELETE", f"/accounts/{account_id}", ADMIN, None),
            *[("POST", "/accounts/me/tokens", token, {"scopes": ["bots:write"]})] * 3)
        assert deleted.status_code == 200
        assert all(answer.status_code in (201, 401, 403) for answer in made)
        left = [key for key in store.redis.scan_iter("referee:token:*")
                if store.redis.get(key) and account_id.encode() in store.redis.get(key)]
        assert left == [], (attempt, left)


def test_a_bot_retired_while_a_match_or_tournament_seats_it_is_not_seated_after(
        api, bot_server, monkeypatch):
    """A match or tournament is stored under its bots' locks, which a retirement takes: it
    is stored before the retirement, or refused (409). Before, the bots were checked, then
    the retirement stored, then the match (7 in 30 over HTTP, a helper's audit)."""
    store = api.app.extensions["referee"].store
    stored_before: list[set[bytes]] = []
    real_update = store.update_bot

    def update_bot(bot: dict) -> None:  # what was stored when a retirement is written
        if bot.get("retired_at"):
            stored_before.append({*store.redis.zrange(matches_key(), 0, -1),
                                  *store.redis.zrange(tournaments_key(), 0, -1)})
        real_update(bot)

    monkeypatch.setattr(store, "update_bot", update_bot)
    url, house = bot_server.url("/random"), api.register_bot(bot_server.url("/random"),
                                                              name="house")
    for attempt in range(10):
        bot = api.register_bot(url, name=f"retiring {attempt}")
        seats = [{"kind": "bot", "bot_id": bot}, {"kind": "bot", "bot_id": house}]
        match, tournament, retired = together(
            api, ("POST", "/matches", ADMIN, {"game": "aladino", "seats": seats}),
            ("POST", "/tournaments", ADMIN, {"game": "aladino", "bots": [bot, house],
                                            "players": 2}),
            ("DELETE", f"/bots/{bot}", ADMIN, None))
        assert retired.status_code == 200
        for made in (match, tournament):
            assert made.status_code in (201, 409), made.get_json()
            if made.status_code == 201:
                assert made.get_json()["id"].encode() in stored_before[-1], attempt
