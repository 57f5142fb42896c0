"""Auth: tokens are compared in constant time; seat and admin tokens never appear in
replays, Redis, logs or error bodies; admin writes are refused without the admin token;
bot URLs are limited to the allowlist (default loopback only), and bots cannot redirect
the referee elsewhere."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
import redis
import requests

from referee.api import auth
from referee.config import Config
from referee.match.runner import FailurePolicy, PushSeat, run_match
from tests.support.apitest import ADMIN
from tournament.store import Store


def test_tokens_are_compared_with_hmac_compare_digest(api, monkeypatch):
    """Every admin and seat token check goes through hmac.compare_digest (the admin token
    itself; the seat token's sha256 against the stored digest)."""
    compared: list[tuple] = []

    def spy(a, b):
        compared.append((a, b))
        return real(a, b)

    real = hmac.compare_digest
    monkeypatch.setattr(hmac, "compare_digest", spy)
    match = api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}], seed=1)
    assert (ADMIN.encode(), ADMIN.encode()) in compared
    seat_token = match["tokens"][0]["token"]
    compared.clear()
    assert api.get(f"/matches/{match['id']}/observation", token=seat_token).status_code == 200
    digest = hashlib.sha256(seat_token.encode()).hexdigest()
    assert (digest, digest) in compared, "the seat token's digest is compared in constant time"
    compared.clear()
    assert api.post("/bots", token="not-" + ADMIN, json={}).status_code == 403
    assert compared == [(("not-" + ADMIN).encode(), ADMIN.encode())]


@pytest.mark.parametrize("token", [ADMIN[:-1], ADMIN + "x", ADMIN.upper(), "é" * 8, " "])
def test_only_the_exact_admin_token_is_admin(token):
    assert not auth.is_admin(token, ADMIN)
    assert auth.is_admin(ADMIN, ADMIN) and not auth.is_admin(ADMIN, "")


@pytest.mark.parametrize("path, body", [
    ("/bots", {"name": "x", "url": "http://127.0.0.1:9/bot", "games": ["aladino"]}),
    ("/matches", {"game": "aladino", "seats": [{"kind": "pull"}, {"kind": "pull"}]}),
    ("/tournaments", {"game": "aladino", "bots": ["bot-a", "bot-b"]}),
])
def test_admin_writes_are_refused_without_the_admin_token(api, path, body):
    match = api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}], seed=1)
    seat_token = match["tokens"][0]["token"]
    before = api.get(path).get_json()
    assert api.post(path, json=body).status_code == 401
    assert api.post(path, json=body, token="wrong").status_code == 403
    assert api.post(path, json=body, token=seat_token).status_code == 403
    assert api.post(path, json=body, headers={"Authorization": f"Basic {ADMIN}"}).status_code \
        == 401
    assert api.get(path).get_json() == before, "nothing was written"


@pytest.mark.parametrize("url, status", [
    ("http://10.0.0.5/bot", 403), ("http://192.168.1.1/bot", 403),
    ("http://169.254.169.254/latest/meta-data", 403), ("http://172.16.0.1/", 403),
    ("http://0.0.0.0:8001/", 403), ("http://[::ffff:a00:1]/", 403),
    ("http://example.com/", 403), ("http://127.0.0.1.example.com/", 403),
    ("http://2130706433/", 400), ("http://localhost@10.0.0.1/", 400),
    ("file:///etc/passwd", 400), ("gopher://127.0.0.1/", 400),
])
def test_bot_urls_off_the_default_allowlist_are_refused(api, url, status):
    """Malformed or ambiguous: 400; well-formed with a host off the allowlist: 403."""
    response = api.post("/bots", token=ADMIN, json={"name": "x", "url": url,
                                                    "games": ["aladino"]})
    assert response.status_code == status and list(response.get_json()["errors"]) == ["url"]


def test_the_allowlist_comes_from_the_config():
    config = Config.from_env({"REFEREE_BOT_HOSTS": "10.0.0.0/8, bots.internal"})
    assert config.bot_url_problem("http://10.1.2.3:8000/bot") is None
    assert config.bot_url_problem("https://BOTS.internal/x") is None
    assert "allowlist" in config.bot_url_problem("http://127.0.0.1/bot")
    default = Config.from_env({})
    for url in ("http://127.0.0.1:8001/", "http://127.9.9.9/", "http://localhost/",
                "http://[::1]:8001/"):
        assert default.bot_url_problem(url) is None, url


def test_a_bot_cannot_redirect_the_referee_elsewhere(bad_bots):
    seats = [PushSeat(bad_bots.url("/good")), PushSeat(bad_bots.url("/redirect"))]
    record = run_match("aladino", 3, {}, seats, FailurePolicy(), "m-redirect")
    fault = record["steps"][-1]["fault"]
    assert fault["code"] == "crash" and "HTTP 302" in fault["detail"]


def everything_in_redis(client: redis.Redis) -> str:
    """Every key and value in Redis, as text."""
    parts = []
    for key in client.scan_iter():
        kind = client.type(key).decode()
        value = {"string": lambda k: client.get(k), "hash": client.hgetall,
                 "list": lambda k: client.lrange(k, 0, -1), "set": client.smembers,
                 "zset": lambda k: client.zrange(k, 0, -1), "stream": client.xrange}[kind](key)
        parts.append(f"{key!r} {value!r}")
    return "\n".join(parts)


def test_tokens_never_appear_in_replays_redis_logs_or_error_bodies(live_server, workers,
                                                                  redis_url):
    """A pull match played through `referee serve` on a `referee worker`, with every kind
    of refused request on the way; the API's and the worker's logs are kept in files."""
    admin = {"Authorization": f"Bearer {ADMIN}"}
    base = live_server.url
    created = requests.post(f"{base}/matches", headers=admin, timeout=10, json={
        "game": "aladino", "seats": [{"kind": "pull"}, {"kind": "pull"}], "seed": 4})
    assert created.status_code == 201
    match_id = created.json()["id"]
    tokens = {t["seat"]: t["token"] for t in created.json()["tokens"]}
    workers.start()
    bodies = [refused_requests(base, match_id, tokens, admin)]
    bodies += play_to_the_end(base, match_id, tokens)
    record = requests.get(f"{base}/matches/{match_id}/replay", timeout=10)
    assert record.status_code == 200 and record.json()["result"] is not None
    workers.stop_all()
    secrets_ = [ADMIN, *tokens.values()]
    texts = {"error and move bodies": "\n".join(bodies), "replay": record.text,
             "redis": everything_in_redis(Store.from_url(redis_url).redis),
             "API log": live_server.log(), "worker log": workers.logs()}
    assert f"/matches/{match_id}/actions" in texts["API log"], "the API log was captured"
    assert match_id in texts["worker log"], "the worker log was captured"
    for where, text in texts.items():
        for secret in secrets_:
            assert secret not in text, f"a token appears in the {where}"


def refused_requests(base: str, match_id: str, tokens: dict[int, str], admin: dict) -> str:
    """Every refusal a token holder can provoke; returns the bodies."""
    url = f"{base}/matches/{match_id}"
    seat0, seat1 = ({"Authorization": f"Bearer {tokens[s]}"} for s in (0, 1))
    attempts = [
        ("get", f"{url}/observation", {"Authorization": "Bearer " + tokens[0][::-1]}, None, 403),
        ("get", f"{url}/observation", admin, None, 403),
        ("get", f"{url}/observation", {"Authorization": f"Basic {tokens[0]}"}, None, 401),
        ("get", f"{base}/matches/m-nope/observation", seat0, None, 404),
        ("post", f"{base}/bots", seat0, {"name": "x"}, 403),
        ("get", f"{url}/replay", seat0, None, 403),
        ("post", f"{url}/actions", seat0, {"step": 0, "action": {"type": "fly"}}, None),
        ("post", f"{url}/actions", seat1, {"step": 0, "action": {"type": "move"}}, 409),
        ("post", f"{url}/actions", seat0, {"step": 0}, 400),
        ("post", f"{url}/actions", seat0, b"{not json", 400),
    ]
    bodies = []
    for method, target, headers, body, status in attempts:
        kwargs = {"data": body} if isinstance(body, bytes) else {"json": body}
        response = requests.request(method, target, headers=headers, timeout=10, **kwargs)
        assert response.status_code == status or (status is None and response.status_code in
                                                  (400, 422)), (target, response.text)
        assert response.headers["Content-Type"] == "application/problem+json"
        bodies.append(response.text)
    return "\n".join(bodies)


def play_to_the_end(base: str, match_id: str, tokens: dict[int, str]) -> list[str]:
    """Both seats play their first legal action until the match is over (plus one stale
    move per turn); returns every answer's body."""
    bodies = []
    for _ in range(500):
        for seat, token in tokens.items():
            headers = {"Authorization": f"Bearer {token}"}
            seen = requests.get(f"{base}/matches/{match_id}/observation", headers=headers,
                                timeout=10).json()
            if seen["status"] == "finished":
                return bodies
            if seen["to_move"] != seat:
                continue
            move = {"step": seen["step"], "action": seen["legal_actions"][0]}
            for expected in (200, 409):  # the second is stale
                answer = requests.post(f"{base}/matches/{match_id}/actions", headers=headers,
                                       json=move, timeout=10)
                assert answer.status_code == expected, answer.text
                bodies.append(answer.text)
    raise AssertionError("the pull match did not end")


@pytest.mark.parametrize("authorization", [
    "Basic " + base64.b64encode(b"proxy-user:proxy-pass").decode(), f"Basic {ADMIN}",
    "Bearer", "Bearer   ", "Token abc", "Digest username=x", "NTLM TlRMTVNTUAAB"])
def test_an_authorization_that_is_not_a_bearer_token_is_no_token(live_server, authorization):
    """Behind a proxy with basic auth every request carries `Authorization: Basic …`.
    Public reads answer exactly as without a header; admin writes answer 401, as without
    a token (they used to answer 401 to every public GET as well)."""
    base = live_server.url
    created = requests.post(f"{base}/matches", headers={"Authorization": f"Bearer {ADMIN}"},
                            json={"game": "aladino", "seats": [{"kind": "pull"}] * 2},
                            timeout=10).json()
    header = {"Authorization": authorization}
    for path in ("/health", "/games", "/bots", "/matches", f"/matches/{created['id']}",
                 "/tournaments", "/ratings/aladino", "/matches/m-nope"):
        plain = requests.get(f"{base}{path}", timeout=10)
        carrying = requests.get(f"{base}{path}", headers=header, timeout=10)
        assert (carrying.status_code, carrying.json()) == (plain.status_code, plain.json()), path
    assert requests.get(f"{base}/matches/{created['id']}", headers=header,
                        timeout=10).json()["seed"] is None, "no admin view without the token"
    for path in ("/bots", "/matches", f"/matches/{created['id']}/actions"):
        refused = requests.post(f"{base}{path}", headers=header, json={}, timeout=10)
        assert refused.status_code == 401 and refused.headers["WWW-Authenticate"] == "Bearer"
        assert refused.json()["type"] == "/problems/auth/missing-token"
