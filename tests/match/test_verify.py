"""Replay verification: recorded matches verify; every tampered field is detected and named."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import random

import orjson
import pytest

import engines
from referee.match import replay
from referee.match.botclient import BotReply
from referee.match.canonical import jcs
from referee.match.runner import FailurePolicy, MatchPlay, run_match
from referee.match.sealing import Sealer, SigningKey, Verifier
from referee.match.verify import UnsupportedReplay, verify
from tests.support.apitest import V1_RECORD, V1_SECRET, V2_RECORD, V2_SECRET, replay_states
from tests.support.botserver import illegal_answer

SEALER = Sealer((SigningKey.generate(),))
KEYS = Verifier.of([SEALER.keys[0].public_raw])  # only the public key
V1_KEYS = Verifier.of(hmac_secrets=[V1_SECRET])
V2_KEYS = Verifier.of(hmac_secrets=[V2_SECRET])


class InProcessSeat:
    """A real seat answering in-process: a seeded legal choice, and now and then a
    malformed answer or an action the rules refuse, so fault records are verified too."""

    deadline_ms = 0

    def __init__(self, seed: int, fault_rate: float):
        self.seed = seed
        self.fault_rate = fault_rate

    def info(self) -> dict:
        return {"kind": "bot", "bot_id": "in-process", "name": "in-process", "deadline_ms": 0}

    async def decide(self, payload: dict) -> BotReply:
        chooser = random.Random(f"{self.seed}:{payload['step']}")
        roll = chooser.random()
        if roll < self.fault_rate / 2:
            return BotReply(None, "malformed", "<html>", 0.0, "the answer is not JSON")
        if roll < self.fault_rate:
            answer = illegal_answer(payload)
            return BotReply(orjson.loads(answer)["action"], None, answer.decode(), 0.0)
        return BotReply(chooser.choice(payload["legal_actions"]), None, "", 0.0)

    async def aclose(self) -> None:
        """Nothing to release."""


def record_match(game: str, variant: dict, seed: int, policy: FailurePolicy,
                 fault_rate: float = 0.05) -> dict:
    seats = [InProcessSeat(seed * 10 + seat, fault_rate)
             for seat in range(variant["num_players"])]
    record = run_match(game, seed, variant["options"], seats, policy, f"m-{game}-{seed}")
    return orjson.loads(replay.canonical(replay.seal(record, SEALER)))


def policy_for(index: int) -> FailurePolicy:
    """Mostly random substitution, every tenth match forfeits on an illegal action."""
    return FailurePolicy(malformed="random", illegal="forfeit" if index % 10 == 9 else "random")


@pytest.mark.parametrize("game", engines.names())
def test_a_hundred_recorded_matches_verify(game):
    variants = engines.get(game).variants()
    forfeits = strikes = 0
    for index in range(100):
        record = record_match(game, variants[index % len(variants)], 1000 + index,
                              policy_for(index))
        report = verify(record, KEYS)
        assert report.valid, (index, report)
        assert report.chain == "valid" and report.signature == "valid"
        assert report.steps_checked == len(record["steps"])
        forfeits += record["forfeit"] is not None
        strikes += sum(record["strikes"])
    assert forfeits > 0 and strikes > 0, "the sample must include fault records"


@pytest.fixture(scope="module")
def recorded() -> dict:
    """An Aldabas match with substituted moves (random policy)."""
    record = record_match("aldabas", {"num_players": 3, "options": {}}, 77,
                          FailurePolicy.uniform("random"), fault_rate=0.1)
    assert sum(record["strikes"]) > 0 and len(record["steps"]) > 20
    return record


def first_plain_step(record: dict, start: int = 5) -> int:
    return next(s["step"] for s in record["steps"][start:] if s["fault"] is None)


def other_legal_action(record: dict, index: int) -> dict:
    state = replay_states(record)[index]
    played = record["steps"][index]["action"]
    return next(a for a in engines.get(record["game"]).legal_actions(state) if a != played)


def tampered(record: dict, change) -> dict:
    copy_ = copy.deepcopy(record)
    change(copy_)
    return copy_


def test_the_untouched_record_is_valid(recorded):
    report = verify(recorded, KEYS)
    assert report.valid and report.problem is None


def test_a_changed_action_is_named_at_its_step(recorded):
    index = first_plain_step(recorded)
    other = other_legal_action(recorded, index)

    def change(r):
        r["steps"][index]["action"] = other

    report = verify(tampered(recorded, change), KEYS)
    assert not report.valid and report.problem.step == index
    assert report.problem.field == "state_hash" and report.steps_checked == index
    assert report.chain == "invalid" and report.signature == "invalid"


def test_an_illegal_action_is_named_with_the_engines_reason(recorded):
    index = first_plain_step(recorded)

    def change(r):
        r["steps"][index]["action"] = {"type": "__nope__"}

    report = verify(tampered(recorded, change), KEYS)
    assert report.problem.step == index and report.problem.field == "action"
    assert "unknown action type" in report.problem.reason


def test_a_changed_substitution_breaks_the_fault_record(recorded):
    index = next(s["step"] for s in recorded["steps"] if s["fault"])
    other = other_legal_action(recorded, index)

    def change(r):
        r["steps"][index]["action"] = other

    report = verify(tampered(recorded, change), KEYS)
    assert report.problem.step == index and report.problem.field == "fault"


@pytest.mark.parametrize("field, change", [
    ("seed", lambda r: r.update(seed=r["seed"] + 1)),
    ("result.scores", lambda r: r["result"]["scores"].__setitem__(0, r["result"]["scores"][0] + 1)),
    ("result.ranks", lambda r: r["result"].update(ranks=list(reversed(r["result"]["ranks"])))),
    ("strikes", lambda r: r["strikes"].__setitem__(0, r["strikes"][0] + 1)),
    ("forfeit", lambda r: r.update(forfeit={"seat": 0, "step": 0, "fault": "timeout"})),
])
def test_a_changed_record_field_is_named(recorded, field, change):
    report = verify(tampered(recorded, change), KEYS)
    assert not report.valid and report.problem.field == field, report
    assert report.signature == "invalid"


def test_a_changed_hash_is_named_at_its_step(recorded):
    """Step 7's hash is not signed (referee-replay/3 signs every 16th step's and the last's)
    but the re-run checks it; step 15's is signed: the chain breaks too."""
    for index, chain in ((7, "valid"), (15, "invalid")):
        def change(r, index=index):
            r["steps"][index]["state_hash"] = "0" * 64

        report = verify(tampered(recorded, change), KEYS)
        assert (report.problem.step, report.problem.field) == (index, "state_hash")
        assert report.chain == chain and not report.valid


def test_steps_without_their_unsigned_hashes_verify_but_a_checkpoint_needs_its_own(recorded):
    """A record as the driver seals it carries the hashes of its checkpoints only: it is the
    same record (chain and signature hold); a checkpoint's hash dropped is named."""
    last = len(recorded["steps"]) - 1
    bare = tampered(recorded, lambda r: [
        step.pop("state_hash") for index, step in enumerate(r["steps"])
        if (index + 1) % replay.CHECKPOINT_EVERY and index != last])
    report = verify(bare, KEYS)
    assert report.valid and report.chain == "valid" and report.signature == "valid", report
    assert report.steps_checked == len(recorded["steps"])
    for index in (15, last):
        missing = tampered(bare, lambda r, index=index: r["steps"][index].pop("state_hash"))
        report = verify(missing, KEYS)
        assert (report.problem.step, report.problem.field) == (index, "state_hash")
        assert "no state hash" in report.problem.reason and report.chain == "invalid"


def test_a_match_played_as_the_driver_plays_it_verifies():
    """MatchPlay without `every_state_hash` (the worker's): checkpoints hashed, the rest
    not, and the sealed record verifies."""
    seats = [InProcessSeat(n, 0.05) for n in range(2)]
    play = MatchPlay.start("caravans", 9, {}, [seat.info() for seat in seats],
                           FailurePolicy.uniform("random"), "m-driver-like")

    async def moves() -> None:
        while (seat := play.to_move) is not None:
            payload = play.payload(seat, 1000)
            play.advance(seat, await seats[seat].decide(payload), payload["legal_actions"])

    asyncio.run(moves())
    record = play.finish(SEALER)
    hashed = [step["step"] for step in record["steps"] if "state_hash" in step]
    assert hashed == [*range(15, len(record["steps"]) - 1, 16), len(record["steps"]) - 1]
    assert verify(record, KEYS).valid


def test_swapped_steps_are_named(recorded):
    def change(r):
        r["steps"][3], r["steps"][4] = r["steps"][4], r["steps"][3]

    report = verify(tampered(recorded, change), KEYS)
    assert (report.problem.step, report.problem.field) == (3, "step")
    assert "out of order" in report.problem.reason and report.chain == "invalid"


def test_a_dropped_last_step_is_named(recorded):
    report = verify(tampered(recorded, lambda r: r["steps"].pop()), KEYS)
    assert report.problem.field == "steps" and "not over" in report.problem.reason


def test_a_changed_signature_is_named(recorded):
    def change(r):
        r["signature"]["value"] = "f" * 64

    report = verify(tampered(recorded, change), KEYS)
    assert report.problem is None and report.chain == "valid"
    assert report.signature == "invalid" and not report.valid


def test_signature_checks_need_the_right_key(recorded):
    another = Verifier.of([SigningKey.generate().public_raw], ["a-secret"])
    assert verify(recorded, another).signature == "unknown-key"
    unchecked = verify(recorded, Verifier())
    assert unchecked.valid and unchecked.signature == "not-checked" and unchecked.notes
    stripped = tampered(recorded, lambda r: r.update(signature=None))
    assert verify(stripped, KEYS).signature == "missing"
    assert not verify(stripped, KEYS).valid


def test_a_replay_of_another_game_version_is_refused(recorded):
    other = tampered(recorded, lambda r: r.update(game_version="0.0.1"))
    with pytest.raises(UnsupportedReplay, match="version '0.0.1'"):
        verify(other, KEYS)


def test_new_records_are_format_3_hashed_with_rfc8785(recorded):
    assert recorded["format"] == replay.FORMAT == "referee-replay/3"
    state = replay_states(recorded)[0]
    assert recorded["initial_state_hash"] == hashlib.sha256(jcs(state)).hexdigest()


def test_a_record_written_again_with_integral_floats_as_integers_still_verifies(recorded):
    """What a JavaScript client does to 3.0 (JSON.parse then JSON.stringify gives 3)."""
    record = tampered(recorded, lambda r: [s.update(elapsed_ms=3.0) for s in r["steps"]])
    resealed = orjson.loads(replay.canonical(replay.seal(record, SEALER)))
    as_javascript_writes_it = tampered(resealed, lambda r: [s.update(elapsed_ms=3)
                                                            for s in r["steps"]])
    report = verify(as_javascript_writes_it, KEYS)
    assert report.valid and report.signature == "valid", report


def test_a_referee_replay_1_record_made_before_format_2_still_verifies():
    """The committed file was written by the referee as it was before RFC 8785 (orjson
    sorted keys; a seed above 2**53; float elapsed_ms): it verifies exactly as then."""
    record = orjson.loads(V1_RECORD.read_bytes())
    assert record["format"] == "referee-replay/1" and record["seed"] > 2**53
    report = verify(record, V1_KEYS)
    assert report.valid and report.chain == "valid" and report.signature == "valid", report
    assert report.steps_checked == len(record["steps"]) and sum(record["strikes"]) == 2


def test_a_referee_replay_1_record_is_checked_with_its_own_canonical_form():
    """Its hashes are over orjson's bytes: an elapsed_ms written 3 where it was 3.0 breaks
    its chain and its signature (as it always did), and a changed step is found."""
    record = orjson.loads(V1_RECORD.read_bytes())
    index = next(i for i, s in enumerate(record["steps"]) if s["elapsed_ms"] == 3.0)
    rewritten = tampered(record, lambda r: r["steps"][index].update(elapsed_ms=3))
    report = verify(rewritten, V1_KEYS)
    assert report.problem is None and report.chain == "invalid" and not report.valid
    moved = tampered(record, lambda r: r.update(seed=r["seed"] + 1))
    assert verify(moved, V1_KEYS).problem.field == "seed"


def test_a_referee_replay_2_record_made_before_format_3_still_verifies():
    """The committed file was written by the referee as it was before format 3 (every
    step's state hash signed; HMAC): it verifies, and every hash is still checked."""
    record = orjson.loads(V2_RECORD.read_bytes())
    assert record["format"] == "referee-replay/2" and sum(record["strikes"]) == 2
    report = verify(record, V2_KEYS)
    assert report.valid and report.chain == "valid" and report.signature == "valid", report
    assert report.steps_checked == len(record["steps"])
    changed = tampered(record, lambda r: r["steps"][7].update(state_hash="0" * 64))
    report = verify(changed, V2_KEYS)
    assert (report.problem.step, report.problem.field) == (7, "state_hash")
    assert report.chain == "invalid" and report.signature == "invalid"
    dropped = tampered(record, lambda r: r["steps"][7].pop("state_hash"))
    assert verify(dropped, V2_KEYS).problem.field == "state_hash"


def test_an_unknown_format_is_refused(recorded):
    other = tampered(recorded, lambda r: r.update(format="referee-replay/9"))
    with pytest.raises(UnsupportedReplay,
                       match="referee-replay/1, referee-replay/2, referee-replay/3"):
        verify(other, KEYS)
