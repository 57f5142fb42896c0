"""`referee.match.compact`: the stored forms read back exactly what was written."""

from __future__ import annotations

import random
import zlib

import orjson
import pytest

from referee.match import compact, replay
from referee.match.botclient import BotReply
from referee.match.clock import TimeControl
from referee.match.runner import FailurePolicy, run_match
from referee.match.sealing import Sealer


class Seat:
    """Random moves; every fifth decision a malformed answer (a fault with a raw reply)."""

    deadline_ms = 800

    def __init__(self, seed: int):
        self.chooser, self.asked = random.Random(seed), 0

    def info(self) -> dict:
        return {"kind": "bot", "bot_id": f"bot-{self.chooser.random()}", "name": "s",
                "deadline_ms": 800}

    async def decide(self, payload: dict) -> BotReply:
        self.asked += 1
        if self.asked % 5 == 0:
            return BotReply(None, "malformed", '{"move": 1}', 2.25, "no action")
        return BotReply(self.chooser.choice(payload["legal_actions"]), None, "",
                        round(self.chooser.uniform(0.1, 40), 3))

    async def aclose(self) -> None:
        """Nothing to release."""


@pytest.fixture(scope="module")
def record() -> dict:
    return run_match("aldabas", 11, {"mode": "multi"}, [Seat(n) for n in range(3)],
                     FailurePolicy.uniform("random"), "m-compact", sealer=Sealer.hmac("k"))


def test_a_record_reads_back_byte_for_byte_and_smaller_than_before(record):
    stored = compact.encode(record)
    assert stored.startswith(compact.MAGIC)
    assert orjson.dumps(compact.decode(stored)) == orjson.dumps(record)
    assert any(step["fault"] for step in record["steps"])
    rows = [{k: v for k, v in step.items() if k != "state_hash"} for step in record["steps"]]
    old = compact.MAGIC_V1 + zlib.compress(orjson.dumps({**record, "steps": rows}), 6)
    assert len(stored) < 0.75 * len(old)


def test_clocks_and_the_debug_channel_are_columns_too():
    """Issue 26: steps with `clock`, `debug`, `info` or `debug_truncated` (some steps only)
    stay in the column form and read back byte for byte."""
    class Talking(Seat):
        async def decide(self, payload: dict) -> BotReply:
            reply = await super().decide(payload)
            if payload["step"] % 3 == 0:
                reply.debug, reply.info = f"step {payload['step']}", {"depth": payload["step"]}
            reply.debug_truncated = payload["step"] % 7 == 0
            return reply

    clocked = run_match("aldabas", 12, {"mode": "multi"}, [Talking(n) for n in range(3)],
                        FailurePolicy.uniform("random"), "m-compact-clock",
                        sealer=Sealer.hmac("k"), time_control=TimeControl(60_000, 100))
    body = orjson.loads(compact.stored_body(clocked))
    assert isinstance(body["steps"], dict) and set(body["steps"]) >= {
        "clock", "debug", "info", "debug_truncated"}
    stored = compact.encode(clocked)
    assert orjson.dumps(compact.decode(stored)) == orjson.dumps(clocked)
    rows = [{k: v for k, v in step.items() if k != "state_hash"} for step in clocked["steps"]]
    assert compact.decode_steps(stored)["steps"] == rows


def test_steps_of_an_unusual_shape_are_kept_as_rows(record):
    odd = {**record, "steps": [{**step, "note": 1} for step in record["steps"]]}
    odd = replay.seal({**odd, "chain": None, "signature": None}, Sealer.hmac("k"))
    body = orjson.loads(compact.stored_body(odd))
    assert isinstance(body["steps"], list) and "state_hash" not in body["steps"][0]
    assert compact.decode(compact.encode(odd)) == odd


def test_decoding_without_rerun_gives_the_steps_without_hashes(record):
    steps = compact.decode_steps(compact.encode(record))["steps"]
    assert steps == [{k: v for k, v in s.items() if k != "state_hash"} for s in record["steps"]]


def test_a_changed_action_no_longer_reaches_the_sealed_chain_head(record):
    body = orjson.loads(compact.stored_body(record))
    body["steps"]["elapsed_ms"][0] += 1
    forged = compact.MAGIC + compact._deflate(orjson.dumps(body))
    with pytest.raises(compact.StoredReplayError, match="chain head"):
        compact.decode(forged)


@pytest.mark.parametrize("value", [None, 0, "x", [1, 2], {"a": 1},
                                   {"scores": [1, 2], "ranks": [1, 2], "details": {}} | {
                                       "seats": [{"seat": n, "kind": "bot"} for n in range(4)]}])
def test_small_values_pack_and_unpack(value):
    packed = compact.pack(value)
    assert compact.unpack(packed) == value
    assert len(packed) <= len(orjson.dumps(value))
    assert compact.unpack(orjson.dumps(value)) == value  # plain JSON of earlier versions


def test_each_value_is_deflated_as_by_a_fresh_compressor_with_the_dictionary():
    """The compressor primed with the dictionary once is copied for each value: the same
    bytes as a new one (what records stored before were written with), one value's state
    never carried into the next."""
    def fresh(data: bytes) -> bytes:
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY,
                                      compact.dictionary())
        return compressor.compress(data) + compressor.flush()

    values = [b'{"scores":[12,40],"ranks":[2,1]}', b'{"seats":[{"seat":0}]}' * 40, b"[]"]
    for data in [*values, *values]:
        assert compact._deflate(data) == fresh(data)
        assert compact._inflate(compact._deflate(data)) == data


def test_a_changed_dictionary_is_refused(tmp_path, monkeypatch):
    changed = tmp_path / "dictionary.json"
    samples = orjson.loads(compact.DICTIONARY_FILE.read_bytes())
    samples["samples"][0] += " "
    changed.write_bytes(orjson.dumps(samples))
    monkeypatch.setattr(compact, "DICTIONARY_FILE", changed)
    compact.dictionary.cache_clear()
    try:
        with pytest.raises(compact.StoredReplayError, match="was changed"):
            compact.dictionary()
    finally:
        monkeypatch.undo()
        compact.dictionary.cache_clear()
    assert compact.dictionary()
