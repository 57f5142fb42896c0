"""The results log over the API (issue 25), against the real Redis: every finished match is a
leaf, hashed as RFC 6962 section 2.1 says; the proofs served are checked against a reference
computation written here from the RFC's definitions, and the heads and keys with the
`cryptography` package directly."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys

import pytest
import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

import engines
from referee.match import replay
from referee.match.replay import utc_now
from referee.match.runner import FailurePolicy
from tests.support.apitest import ADMIN, ROOT, drive_match, sealer_of_tests, store_finished
from tournament.store import Store, bot_seats, new_match_meta


# ----- a reference computation, straight from RFC 6962 section 2.1 ----------------------------
def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def largest_power_below(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(leaves: list[bytes]) -> bytes:
    """MTH(D[n]) over leaf data (2.1)."""
    if not leaves:
        return sha256(b"")
    if len(leaves) == 1:
        return sha256(b"\x00" + leaves[0])
    k = largest_power_below(len(leaves))
    return sha256(b"\x01" + mth(leaves[:k]) + mth(leaves[k:]))


def path(m: int, leaves: list[bytes]) -> list[bytes]:
    """PATH(m, D[n]) (2.1.1)."""
    if len(leaves) <= 1:
        return []
    k = largest_power_below(len(leaves))
    if m < k:
        return path(m, leaves[:k]) + [mth(leaves[k:])]
    return path(m - k, leaves[k:]) + [mth(leaves[:k])]


def subproof(m: int, leaves: list[bytes], whole: bool) -> list[bytes]:
    """SUBPROOF(m, D[n], b) (2.1.2)."""
    if m == len(leaves):
        return [] if whole else [mth(leaves)]
    k = largest_power_below(len(leaves))
    if m <= k:
        return subproof(m, leaves[:k], whole) + [mth(leaves[k:])]
    return subproof(m - k, leaves[k:], False) + [mth(leaves[:k])]


def leaf_data(record: dict) -> bytes:
    """The contract's leaf data: sha256 of the record's canonical bytes without `log`."""
    return sha256(rfc8785.dumps({k: v for k, v in record.items() if k != "log"}))


def from_b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# ----- a log of finished matches ---------------------------------------------------------------
def finish(store: Store, redis_url: str, match_id: str, score: int) -> None:
    """A finished match stored through the driver's script (`Progress.finish`)."""
    version, policy = engines.get("aladino").version, FailurePolicy().to_dict()
    meta = new_match_meta("aladino", version, bot_seats([("b0", "b0"), ("b1", "b1")]), {},
                          score, policy, 1000, 1000, match_id=match_id)
    store.create_match(meta, {}, 0, {})
    record = replay.new_record(
        match_id=match_id, game="aladino", game_version=version, num_players=2, options={},
        seed=score, seats=[{**seat, "deadline_ms": 1000} for seat in meta["seats"]],
        policy=policy, initial_state_hash="0" * 64)
    record.update(result={"scores": [score, 0], "ranks": [1, 2], "details": {}},
                  finished_at=utc_now())
    store_finished(redis_url, match_id, replay.seal(record, sealer_of_tests()))


@pytest.fixture
def store(config) -> Store:
    return Store.from_url(config.redis_url)


@pytest.fixture
def logged(api, store, redis_url) -> list[tuple[str, bytes]]:
    """65 finished matches, in order: (match id, leaf data from the record served)."""
    ids = [f"m-log-{n:03d}" for n in range(65)]
    for n, match_id in enumerate(ids):
        finish(store, redis_url, match_id, n)
    return [(match_id, leaf_data(api.get(f"/matches/{match_id}/replay",
                                         token=ADMIN).get_json())) for match_id in ids]


def test_inclusion_proofs_hold_for_every_leaf_of_every_tree_of_1_to_65(api, logged):
    """RFC 6962 2.1.1: for each tree size N and each leaf i < N, the audit path served with
    `tree_size=N` is PATH(i, D[N]) and the leaf hash is sha256(0x00 || leaf data)."""
    data = [leaf for _, leaf in logged]
    for size in range(1, 66):
        for index in range(size):
            proof = api.get(f"/log/proof/{logged[index][0]}?tree_size={size}").get_json()
            assert proof == {"index": index, "tree_size": size,
                             "leaf_hash": sha256(b"\x00" + data[index]).hex(),
                             "audit_path": [h.hex() for h in path(index, data[:size])]}


def test_consistency_proofs_hold_for_every_pair_up_to_33(api, logged):
    """RFC 6962 2.1.2: PROOF(M, D[N]) for every 0 <= M <= N <= 33 (empty for M = 0, N)."""
    data = [leaf for _, leaf in logged]
    for second in range(0, 34):
        for first in range(0, second + 1):
            answer = api.get(f"/log/consistency?first={first}&second={second}").get_json()
            expected = (subproof(first, data[:second], True) if 0 < first < second else [])
            assert answer == {"first": first, "second": second,
                              "proof": [h.hex() for h in expected]}


def test_the_head_is_the_root_signed_with_a_published_key(api, logged):
    """The head's root is MTH of every leaf; its Ed25519 signature over the RFC 8785 JSON
    of the other four fields verifies with the key of GET /keys, whose id is the start of
    sha256 of the raw public key."""
    head = api.get("/log/head").get_json()
    assert head["tree_size"] == 65
    assert head["root_hash"] == mth([leaf for _, leaf in logged]).hex()
    (key,) = api.get("/keys").get_json()["keys"]
    raw = from_b64url(key["public_key"])
    assert key["key_id"] == hashlib.sha256(raw).hexdigest()[:16] == head["key_id"]
    assert key["algorithm"] == "ed25519" and key["not_after"] is None
    assert head["signature"]["algorithm"] == "ed25519"
    signed = rfc8785.dumps({part: head[part] for part in
                            ("tree_size", "root_hash", "timestamp", "key_id")})
    Ed25519PublicKey.from_public_bytes(raw).verify(from_b64url(head["signature"]["value"]),
                                                   signed)
    assert api.get("/log/head").get_json() == head, "the same head while the tree is unchanged"


def test_the_entries_are_the_leaves_in_the_order_results_were_recorded(api, logged):
    entries = api.get("/log/entries?start=0&end=1000").get_json()["entries"]
    assert [(e["index"], e["match_id"], e["leaf_hash"]) for e in entries] == [
        (n, match_id, sha256(b"\x00" + leaf).hex()) for n, (match_id, leaf) in
        enumerate(logged)]
    assert api.get("/log/entries?start=60&end=62").get_json()["entries"] == entries[60:62]
    assert api.get(f"/matches/{logged[7][0]}").get_json()["log_index"] == 7


@pytest.mark.parametrize(("query", "field"), [
    ("start=-1&end=3", "start"), ("start=a&end=3", "start"), ("end=3", "start"),
    ("start=0&end=9007199254740992", "end")])
def test_entries_refuse_fields_that_are_not_tree_sizes(api, query, field):
    response = api.get(f"/log/entries?{query}")
    assert response.status_code == 400 and field in response.get_json()["errors"]


def test_entries_stop_at_1000_and_at_the_end_of_the_log(api, store, redis_url):
    for n in range(3):
        finish(store, redis_url, f"m-{n}", n)
    assert len(api.get("/log/entries?start=0&end=9007199254740991").get_json()["entries"]) == 3
    assert api.get("/log/entries?start=2&end=2").get_json() == {"entries": []}
    assert api.get("/log/entries?start=5&end=9").get_json() == {"entries": []}
    store.redis.rpush("referee:log:ids", *[f"m-x{n}" for n in range(1200)])
    store.redis.append("referee:log:level:0", b"\x00" * 32 * 1200)
    assert len(api.get("/log/entries?start=0&end=2000").get_json()["entries"]) == 1000


def test_proofs_beyond_the_log_or_of_matches_not_in_it_are_refused(api, store, redis_url):
    finish(store, redis_url, "m-one", 1)
    beyond = api.get("/log/proof/m-one?tree_size=2")
    assert beyond.status_code == 409
    assert beyond.get_json()["type"] == "/problems/log/out-of-range"
    assert api.get("/log/proof/m-one?tree_size=0").status_code == 400
    assert api.get("/log/consistency?first=1&second=2").get_json()["type"] == (
        "/problems/log/out-of-range")
    assert api.get("/log/consistency?first=2&second=1").status_code == 409
    assert api.get("/log/proof/m-nowhere").status_code == 404
    running = api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}])
    refused = api.get(f"/log/proof/{running['id']}")
    assert refused.status_code == 404
    assert refused.get_json()["type"] == "/problems/log/not-logged"


def test_an_empty_log_has_the_empty_root(api):
    """RFC 6962 2.1: the hash of an empty list is the hash of an empty string."""
    head = api.get("/log/head").get_json()
    assert head["tree_size"] == 0 and head["root_hash"] == sha256(b"").hex()


def test_a_served_replay_carries_its_proof_against_the_current_head(api, logged):
    match_id, _ = logged[10]
    record = api.get(f"/matches/{match_id}/replay", token=ADMIN).get_json()
    assert record["log"]["index"] == 10
    assert record["log"]["head"] == api.get("/log/head").get_json()
    assert record["log"]["proof"] == api.get(f"/log/proof/{match_id}").get_json()
    assert record["signature"]["key_id"] == sealer_of_tests().key_id


def verify_cli(path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "referee.cli", "verify", str(path), *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.fixture
def played(api, bot_server, redis_url, store) -> str:
    """A real match played to its end by the driver, after two others; its id."""
    for n in range(2):
        finish(store, redis_url, f"m-before-{n}", n)
    bots = [api.register_bot(bot_server.url("/first"), name=f"b{n}") for n in range(2)]
    match = api.create_match("caravans", [{"kind": "bot", "bot_id": bot} for bot in bots],
                             seed=4)
    assert drive_match(redis_url, match["id"])["status"] == "finished"
    return match["id"]


def test_referee_verify_checks_a_records_inclusion_with_only_public_keys(
        api, app_url, played, store, redis_url, tmp_path):
    """`referee verify FILE --keys URL --head URL`: the record's signature with the keys
    the server publishes, and its inclusion in the tree the head signs; a record whose proof
    was made against an older head is checked with a proof fetched for the newer one."""
    match_id = played
    path = tmp_path / "record.json"
    path.write_bytes(api.get(f"/matches/{match_id}/replay").get_data())
    finish(store, redis_url, "m-later", 99)  # the tree grows past the record's own head
    done = verify_cli(path, "--keys", f"{app_url}/keys", "--head", f"{app_url}/log/head")
    assert done.returncode == 0 and "log proof: valid" in done.stdout, done.stdout
    own = verify_cli(path, "--keys", f"{app_url}/keys")
    assert own.returncode == 0 and "log proof: valid" in own.stdout, own.stdout

    forged = json.loads(path.read_text())
    forged["log"]["proof"]["audit_path"][0] = "0" * 64
    path.write_text(json.dumps(forged))
    bad = verify_cli(path, "--keys", f"{app_url}/keys")
    assert bad.returncode == 6 and bad.stdout.rstrip().splitlines()[-1].startswith(
        "NOT IN LOG: the audit path does not lead")
    head = tmp_path / "head.json"
    head.write_bytes(api.get("/log/head").get_data())
    stale = verify_cli(path, "--keys", f"{app_url}/keys", "--head", str(head))
    assert stale.returncode == 6 and "give the head's URL" in stale.stdout
    forged["log"]["head"]["root_hash"] = "1" * 64
    path.write_text(json.dumps(forged))
    assert "signature is invalid" in verify_cli(path, "--keys", f"{app_url}/keys").stdout


@pytest.fixture
def config_overrides() -> dict:
    return {"verify_rate": (3, 60)}


def test_verifying_is_rate_limited_per_client_address(api, played):
    """POST /replays/verify costs CPU per step: REFEREE_VERIFY_RATE records per window and
    address (here 3 per minute), then 429 problem+json with Retry-After."""
    record = api.get(f"/matches/{played}/replay").get_json()
    for _ in range(3):
        report = api.post("/replays/verify", json=record).get_json()
        assert report["valid"] and report["log"] == "valid", report
    refused = api.post("/replays/verify", json=record)
    assert refused.status_code == 429
    assert refused.content_type == "application/problem+json"
    assert refused.get_json()["type"] == "/problems/replay/rate-limited"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    other = api.post("/replays/verify", json=record, environ_base={"REMOTE_ADDR": "127.0.0.9"})
    assert other.status_code == 200, "another address has its own allowance"
