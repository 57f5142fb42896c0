"""Signatures of records and tree heads (issue 25, referee/match/sealing.py): the public
contract checked from the outside (key ids, base64url values that `cryptography` verifies
by itself), key files and their rotation, HMAC-only sealing, what the signature covers and
what a verifier answers for each broken signature."""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import json
import os
import re
import stat

import orjson
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from referee.match import replay
from referee.match.botclient import BotReply
from referee.match.runner import FailurePolicy, run_match
from referee.match.sealing import (
    KeyFileError,
    Sealer,
    SigningKey,
    Verifier,
    append_new_key,
    hmac_key_id,
    public_key_id,
    read_key_file,
)
from referee.match.verify import check_head, verify

SIGNING_KEY = SigningKey.generate()
SEALER = Sealer((SIGNING_KEY,))
KEYS = Verifier.of([SIGNING_KEY.public_raw])
SECRET = "an-hmac-secret"
B64URL_UNPADDED = re.compile(r"[A-Za-z0-9_-]+")


class FirstChoiceSeat:
    """A seat that plays the first legal action, in-process."""

    deadline_ms = 0

    def info(self) -> dict:
        return {"kind": "bot", "bot_id": "first", "name": "first", "deadline_ms": 0}

    async def decide(self, payload: dict) -> BotReply:
        return BotReply(payload["legal_actions"][0], None, "", 0.0)

    async def aclose(self) -> None:
        """Nothing to release."""


def played(seed: int = 7) -> dict:
    """A finished, unsigned record of a short solo Aldabas match."""
    record = run_match("aldabas", seed, {"mode": "solo"}, [FirstChoiceSeat()],
                       FailurePolicy.uniform("random"), f"m-sealing-{seed}")
    assert record["signature"] is None and record["steps"]
    return record


def sealed(sealer: Sealer, seed: int = 7) -> dict:
    """The record sealed by `sealer`, as stored (and as any client reads it back)."""
    return orjson.loads(replay.canonical(replay.seal(played(seed), sealer)))


@pytest.fixture(scope="module")
def record() -> dict:
    return sealed(SEALER)


@pytest.fixture(scope="module")
def long_record() -> dict:
    """A sealed 2-player Caravans record of more than two checkpoints."""
    played = run_match("caravans", 7, {}, [FirstChoiceSeat(), FirstChoiceSeat()],
                       FailurePolicy.uniform("random"), "m-sealing-long")
    return orjson.loads(replay.canonical(replay.seal(played, SEALER)))


def raw_signature(value: str) -> bytes:
    """The bytes of base64url text without padding, decoded here (not by the module)."""
    assert B64URL_UNPADDED.fullmatch(value) and "=" not in value
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


def write_keys(path, *keys: SigningKey) -> None:
    path.write_bytes(b"".join(key.pem() for key in keys))


def pkcs8(private) -> bytes:
    return private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())


# ----- the contract, checked without the module's verifier --------------------------------------
def test_the_key_id_is_the_first_16_hex_digits_of_the_sha256_of_the_raw_public_key():
    raw = SIGNING_KEY.private.public_key().public_bytes(serialization.Encoding.Raw,
                                                        serialization.PublicFormat.Raw)
    assert len(raw) == 32 and SIGNING_KEY.public_raw == raw
    expected = hashlib.sha256(raw).hexdigest()[:16]
    assert SIGNING_KEY.key_id == public_key_id(raw) == expected
    assert re.fullmatch(r"[0-9a-f]{16}", expected)
    assert SigningKey.generate().key_id != expected


def test_an_ed25519_signature_is_unpadded_base64url_that_cryptography_verifies(record):
    signature = record["signature"]
    assert set(signature) == {"algorithm", "key_id", "value"}
    assert signature["algorithm"] == "ed25519" and signature["key_id"] == SIGNING_KEY.key_id
    value = raw_signature(signature["value"])
    assert len(value) == 64 and len(signature["value"]) == 86
    public = Ed25519PublicKey.from_public_bytes(SIGNING_KEY.public_raw)
    public.verify(value, replay.signed_bytes(record))  # raises when it does not hold
    with pytest.raises(InvalidSignature):
        public.verify(value, replay.signed_bytes({**record, "seed": record["seed"] + 1}))


def signed_form(record: dict) -> dict:
    """The record as `referee-replay/3` signs it, written from the contract alone: a step
    keeps its state hash on every 16th step (15, 31, ...) and on the last."""
    steps = record["steps"]
    return {**record, "steps": [
        step if (index + 1) % 16 == 0 or index == len(steps) - 1
        else {k: v for k, v in step.items() if k != "state_hash"}
        for index, step in enumerate(steps)]}


def test_the_signed_bytes_are_the_rfc8785_json_of_the_record_but_signature_and_log(
        long_record):
    """Any client reproduces them: for a record of ASCII strings and integers, RFC 8785 is
    sorted keys and no whitespace (Python's json writes 0.0 where RFC 8785 writes 0, so
    the durations are made integers first), over the record's signed form."""
    whole = copy.deepcopy(long_record)
    for step in whole["steps"]:
        step["elapsed_ms"] = round(step["elapsed_ms"]) + 3
    whole["log"] = {"index": 3}
    assert whole["format"] == "referee-replay/3" and len(whole["steps"]) > 32
    rest = {k: v for k, v in signed_form(whole).items() if k not in ("signature", "log")}
    expected = json.dumps(rest, sort_keys=True, separators=(",", ":")).encode()
    assert replay.signed_bytes(whole) == expected
    logged = {k: v for k, v in signed_form(whole).items() if k != "log"}
    assert replay.leaf_data(whole) == hashlib.sha256(
        json.dumps(logged, sort_keys=True, separators=(",", ":")).encode()).digest()


def test_the_chain_links_the_signed_form_of_every_step(long_record):
    """link(-1) is the initial state hash, link(i) = sha256(link(i-1) + RFC 8785 of step i's
    signed form): a client's chain from the contract is the record's (its durations are
    whole: RFC 8785 writes 0.0 as 0, as Python's json writes 0)."""
    link = bytes.fromhex(long_record["initial_state_hash"])
    for step in signed_form(long_record)["steps"]:
        assert step["elapsed_ms"] == int(step["elapsed_ms"])
        whole = {**step, "elapsed_ms": int(step["elapsed_ms"])}
        link = hashlib.sha256(link + json.dumps(whole, sort_keys=True,
                                                separators=(",", ":")).encode()).digest()
    assert long_record["chain"]["head"] == link.hex()


# ----- key files ---------------------------------------------------------------------------------
def test_a_key_file_of_several_keys_reads_in_order_with_the_last_current(tmp_path):
    keys = [SigningKey.generate() for _ in range(3)]
    path = tmp_path / "keys.pem"
    write_keys(path, *keys)
    assert [key.key_id for key in read_key_file(path)] == [key.key_id for key in keys]
    sealer = Sealer.from_key_file(path)
    assert sealer.current.key_id == keys[-1].key_id == sealer.key_id
    assert sealer.sign(b"message")["key_id"] == keys[-1].key_id


def test_append_new_key_creates_the_key_file_readable_by_its_owner_only(tmp_path):
    path = tmp_path / "keys.pem"
    key = append_new_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [k.key_id for k in read_key_file(path)] == [key.key_id]
    assert os.listdir(tmp_path) == ["keys.pem"]


def test_append_new_key_keeps_the_earlier_keys_byte_for_byte(tmp_path):
    path = tmp_path / "keys.pem"
    first = append_new_key(path)
    before = path.read_bytes()
    second = append_new_key(path)
    after = path.read_bytes()
    assert after.startswith(before) and len(after) > len(before)
    assert [k.key_id for k in read_key_file(path)] == [first.key_id, second.key_id]
    assert first.key_id != second.key_id
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == ["keys.pem"]


def test_append_new_key_keeps_whatever_surrounds_the_earlier_keys(tmp_path):
    """A note above the keys and blank lines after them stay as they were."""
    path = tmp_path / "keys.pem"
    old = SigningKey.generate()
    before = b"# the referee's signing keys, oldest first\n" + old.pem() + b"\n\n"
    path.write_bytes(before)
    new = append_new_key(path)
    assert path.read_bytes().startswith(before)
    assert [k.key_id for k in read_key_file(path)] == [old.key_id, new.key_id]


def test_append_new_key_after_a_last_key_without_a_newline_starts_a_new_line(tmp_path):
    """Each PEM block stays on lines of its own, as other PEM readers (openssl) need."""
    path = tmp_path / "keys.pem"
    old = SigningKey.generate()
    path.write_bytes(old.pem().rstrip(b"\n"))
    before = path.read_bytes()
    new = append_new_key(path)
    after = path.read_bytes()
    assert after.startswith(before)
    assert [k.key_id for k in read_key_file(path)] == [old.key_id, new.key_id]
    lines = after.splitlines()
    assert lines.count(b"-----BEGIN PRIVATE KEY-----") == 2
    assert lines.count(b"-----END PRIVATE KEY-----") == 2


@pytest.mark.parametrize("content", [b"not a key file\n", b"-----BEGIN PRIVATE KEY-----\n"
                                     b"Z2FyYmFnZQ==\n-----END PRIVATE KEY-----\n"])
def test_append_new_key_refuses_a_file_that_is_not_a_key_file(tmp_path, content):
    path = tmp_path / "keys.pem"
    path.write_bytes(content)
    with pytest.raises(KeyFileError):
        append_new_key(path)
    assert path.read_bytes() == content
    assert os.listdir(tmp_path) == ["keys.pem"]


def test_a_missing_key_file_is_named(tmp_path):
    path = tmp_path / "absent.pem"
    with pytest.raises(KeyFileError, match=r"cannot read the key file .*absent\.pem"):
        read_key_file(path)


def test_a_key_file_without_pem_is_named(tmp_path):
    path = tmp_path / "keys.pem"
    path.write_bytes(b"REFEREE_SECRET=hunter2\n")
    with pytest.raises(KeyFileError, match=r"keys\.pem holds no PEM private key"):
        read_key_file(path)


def test_a_garbage_pem_block_is_named_by_its_number(tmp_path):
    path = tmp_path / "keys.pem"
    path.write_bytes(SigningKey.generate().pem() + b"-----BEGIN PRIVATE KEY-----\n"
                     b"bm90IGEga2V5IGF0IGFsbA==\n-----END PRIVATE KEY-----\n")
    with pytest.raises(KeyFileError, match=r"keys\.pem: key 2 cannot be read"):
        read_key_file(path)


@pytest.mark.parametrize("kind", ["rsa", "ec"])
def test_a_key_of_another_algorithm_is_not_an_ed25519_key(tmp_path, kind):
    private = (rsa.generate_private_key(public_exponent=65537, key_size=2048) if kind == "rsa"
               else ec.generate_private_key(ec.SECP256R1()))
    path = tmp_path / "keys.pem"
    path.write_bytes(pkcs8(private))
    with pytest.raises(KeyFileError, match=r"keys\.pem: key 1 is not an Ed25519 key"):
        read_key_file(path)
    path.write_bytes(SigningKey.generate().pem() + pkcs8(private))
    with pytest.raises(KeyFileError, match=r"key 2 is not an Ed25519 key"):
        read_key_file(path)


# ----- rotation ----------------------------------------------------------------------------------
def test_a_record_sealed_before_a_rotation_still_verifies_and_the_next_uses_the_new_key(
        tmp_path):
    path = tmp_path / "keys.pem"
    old = append_new_key(path)
    before = sealed(Sealer.from_key_file(path), seed=11)
    assert before["signature"]["key_id"] == old.key_id
    new = append_new_key(path)
    rotated = Sealer.from_key_file(path)
    assert rotated.current.key_id == new.key_id != old.key_id
    after = sealed(rotated, seed=12)
    assert after["signature"]["key_id"] == new.key_id
    both = Verifier.of([old.public_raw, new.public_raw])
    assert Verifier.of(k.public_raw for k in rotated.keys) == both
    for each in (before, after):
        report = verify(each, both)
        assert report.valid and report.signature == "valid", report
    assert Verifier.of([new.public_raw]).check(
        before["signature"], replay.signed_bytes(before)) == "unknown-key"


# ----- HMAC-only ---------------------------------------------------------------------------------
def test_an_hmac_only_sealer_signs_with_hmac_sha256_over_the_signed_bytes():
    record = sealed(Sealer.hmac(SECRET))
    signature = record["signature"]
    assert signature["algorithm"] == "hmac-sha256"
    assert signature["key_id"] == hmac_key_id(SECRET)
    expected = hmac.new(SECRET.encode(), replay.signed_bytes(record), hashlib.sha256)
    assert signature["value"] == expected.hexdigest()
    assert verify(record, Verifier.of(hmac_secrets=[SECRET])).valid
    assert Verifier.of(hmac_secrets=[SECRET]).check(
        signature, replay.signed_bytes(record)) == "valid"


def test_an_hmac_record_does_not_verify_with_another_secret():
    record = sealed(Sealer.hmac(SECRET))
    message = replay.signed_bytes(record)
    assert Verifier.of(hmac_secrets=["another-secret"]).check(
        record["signature"], message) == "unknown-key"
    assert KEYS.check(record["signature"], message) == "unknown-key"
    assert not verify(record, Verifier.of(hmac_secrets=["another-secret"])).valid
    forged = {**record["signature"], "value": hmac.new(b"another-secret", message,
                                                       hashlib.sha256).hexdigest()}
    assert Verifier.of(hmac_secrets=[SECRET]).check(forged, message) == "invalid"


def test_a_non_ascii_hmac_value_is_invalid():
    """The HMAC key id is public (every HMAC record shows it): a submitted record may carry
    it with any string as the value."""
    signature = {"algorithm": "hmac-sha256", "key_id": hmac_key_id(SECRET), "value": "é" * 64}
    assert Verifier.of(hmac_secrets=[SECRET]).check(signature, b"message") == "invalid"


# ----- what the signature covers -----------------------------------------------------------------
@pytest.mark.parametrize("log", [{"index": 0}, {"index": 41, "proof": {
    "index": 41, "tree_size": 42, "leaf_hash": "00" * 32, "audit_path": ["11" * 32]},
    "head": {"tree_size": 42, "root_hash": "22" * 32, "timestamp": 1, "key_id": None,
             "signature": None}}])
def test_the_log_member_is_neither_signed_nor_part_of_the_leaf(record, log):
    with_log = {**record, "log": log}
    assert replay.signed_bytes(with_log) == replay.signed_bytes(record)
    assert replay.leaf_data(with_log) == replay.leaf_data(record)
    assert KEYS.check(with_log["signature"], replay.signed_bytes(with_log)) == "valid"
    moved = {**with_log, "log": {**log, "index": 7}}
    assert replay.signed_bytes(moved) == replay.signed_bytes(record)
    assert replay.leaf_data(moved) == replay.leaf_data(record)


def changed(record: dict, field: str) -> dict:
    other = copy.deepcopy(record)
    if field == "format":
        other["format"] = replay.FORMAT_V1 if record["format"] == replay.FORMAT else replay.FORMAT
    else:
        other[field] = {"changed": field}
    return other


SIGNED_FIELDS = [f for f in replay.Record.__annotations__ if f not in ("signature", "log")]
OPTIONAL_FIELDS = {"time_control"}  # only on a match played on a clock


def test_every_field_but_signature_and_log_is_signed(record):
    assert set(SIGNED_FIELDS) | {"signature"} == set(record) | OPTIONAL_FIELDS
    for field in SIGNED_FIELDS:
        other = changed(record, field)
        assert replay.signed_bytes(other) != replay.signed_bytes(record), field
        assert replay.leaf_data(other) != replay.leaf_data(record), field
        assert KEYS.check(other["signature"], replay.signed_bytes(other)) == "invalid", field


def test_a_changed_step_breaks_the_signature(record):
    other = copy.deepcopy(record)
    other["steps"][-1]["elapsed_ms"] += 1
    assert KEYS.check(other["signature"], replay.signed_bytes(other)) == "invalid"


def test_the_signature_is_part_of_the_leaf_but_not_of_the_signed_bytes(record):
    resigned = {**record, "signature": SigningKey.generate().sign(replay.signed_bytes(record))}
    assert replay.signed_bytes(resigned) == replay.signed_bytes(record)
    assert replay.leaf_data(resigned) != replay.leaf_data(record)


# ----- what a verifier answers -------------------------------------------------------------------
@pytest.mark.parametrize("value", ["not base64url!", "a+b/c" * 17 + "d", "é" * 86, "a",
                                   " " + "A" * 86, ""])
def test_a_value_that_is_not_base64url_is_invalid(record, value):
    signature = {**record["signature"], "value": value}
    assert KEYS.check(signature, replay.signed_bytes(record)) == "invalid"


@pytest.mark.parametrize("length", [64, 63, 65, 32])
def test_random_bytes_are_an_invalid_signature(record, length):
    signature = {**record["signature"], "value": base64.urlsafe_b64encode(
        os.urandom(length)).rstrip(b"=").decode()}
    assert KEYS.check(signature, replay.signed_bytes(record)) == "invalid"


def test_a_signature_over_other_bytes_is_invalid(record):
    signature = SIGNING_KEY.sign(replay.signed_bytes(record) + b" ")
    assert KEYS.check(signature, replay.signed_bytes(record)) == "invalid"


@pytest.mark.parametrize("algorithm", ["rsa-sha256", "Ed25519", "ED25519", "", "hmac-sha512"])
def test_an_unknown_algorithm_is_invalid(record, algorithm):
    signature = {**record["signature"], "algorithm": algorithm}
    both = Verifier.of([SIGNING_KEY.public_raw], [SECRET])
    assert both.check(signature, replay.signed_bytes(record)) == "invalid"


@pytest.mark.parametrize("signature", [{"algorithm": "ed25519", "key_id": 1, "value": "x"},
                                       {"algorithm": "ed25519", "value": "x"}, ["ed25519"],
                                       "ed25519"])
def test_a_malformed_signature_object_is_invalid(signature):
    assert KEYS.check(signature, b"message") == "invalid"


def test_a_signature_from_a_key_the_verifier_lacks_is_of_an_unknown_key(record):
    stranger = SigningKey.generate()
    signature = stranger.sign(replay.signed_bytes(record))
    assert KEYS.check(signature, replay.signed_bytes(record)) == "unknown-key"
    assert Verifier.of([stranger.public_raw]).check(
        signature, replay.signed_bytes(record)) == "valid"
    assert Verifier.of([stranger.public_raw]).check(
        record["signature"], replay.signed_bytes(record)) == "unknown-key"


def test_without_any_key_a_signature_is_not_checked_and_none_is_missing(record):
    assert Verifier().check(record["signature"], replay.signed_bytes(record)) == "not-checked"
    assert Verifier.of([], [""]).check(record["signature"], b"anything") == "not-checked"
    assert KEYS.check(None, replay.signed_bytes(record)) == "missing"
    assert KEYS.check({}, replay.signed_bytes(record)) == "missing"


# ----- signed tree heads -------------------------------------------------------------------------
def signed_head(sealer: Sealer = SEALER, **parts) -> dict:
    """A tree head built as the log builds one: signed over `head_bytes`."""
    head = {"tree_size": 5, "root_hash": hashlib.sha256(b"a root").hexdigest(),
            "timestamp": 1_760_000_000_000, "key_id": sealer.key_id, "signature": None,
            **parts}
    head["signature"] = sealer.sign(replay.head_bytes(head))
    return head


def test_head_bytes_are_the_rfc8785_json_of_size_root_timestamp_and_key_id():
    head = signed_head()
    expected = json.dumps({k: head[k] for k in ("tree_size", "root_hash", "timestamp",
                                                "key_id")}, sort_keys=True,
                          separators=(",", ":"))
    assert replay.head_bytes(head) == expected.encode()
    Ed25519PublicKey.from_public_bytes(SIGNING_KEY.public_raw).verify(
        raw_signature(head["signature"]["value"]), expected.encode())


def test_a_signed_head_is_valid():
    assert check_head(signed_head(), KEYS) == "valid"
    assert check_head(signed_head(tree_size=0, root_hash=hashlib.sha256(b"").hexdigest()),
                      KEYS) == "valid"
    assert check_head(signed_head(Sealer.hmac(SECRET)),
                      Verifier.of(hmac_secrets=[SECRET])) == "valid"


@pytest.mark.parametrize("part, value", [
    ("tree_size", 6), ("tree_size", 4),
    ("root_hash", hashlib.sha256(b"another root").hexdigest()),
    ("timestamp", 1_760_000_000_001), ("key_id", "0" * 16)])
def test_a_changed_head_is_refused(part, value):
    head = {**signed_head(), part: value}
    assert check_head(head, KEYS) == "the tree head's signature is invalid"


@pytest.mark.parametrize("part, value", [
    ("root_hash", "ab" * 31), ("root_hash", "AB" * 32), ("root_hash", "zz" * 32),
    ("root_hash", None), ("tree_size", -1), ("tree_size", "5"), ("timestamp", "now"),
    ("timestamp", None)])
def test_a_malformed_head_is_refused(part, value):
    head = signed_head(**{part: value})  # signed as it is: only its form is wrong
    assert check_head(head, KEYS) == "the tree head is malformed"


def test_a_head_signed_with_another_key_or_not_at_all_is_refused():
    assert check_head(signed_head(Sealer((SigningKey.generate(),))), KEYS) == (
        "the tree head's signature is unknown-key")
    assert check_head({**signed_head(), "signature": None}, KEYS) == (
        "the tree head's signature is missing")
    assert check_head(signed_head(), Verifier()) == "the tree head's signature is not-checked"
