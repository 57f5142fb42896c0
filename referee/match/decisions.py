"""A finished record's decisions as training records (issue 30, `referee export`).

One record per decision: the match, the step and the seat, the bot and its version, the
observation the seat decided on (`game.observation(state, seat)`, exactly what the bot was
sent), its legal actions, the action recorded (the substituted move under the `random`
policy, null for a forfeit; `fault` says which), and the seat's final rank and score.

The observations come from what the match's driver kept (`KeptDecisions`): the driver
writes each observation as JSON to send it to the bot, and keeps those bytes, with the
legal actions', through the match; at its end they are stored beside the replay, zstd-
compressed (about 100-200 bytes a decision), and an export reads them back instead of
playing the match again. A match without them (played in parts by several drivers, stored
before they were kept, archived since, or kept ones that do not fit the record) is played
again: one pass over the record, the steps applied in order from its seed, each decision's
observation written on the way by an `ObservationWriter` (engines.observation_json: the
same bytes as `orjson.dumps(observation)`, without writing again what the seat's previous
observation wrote, its log above all). Both give the same bytes
(tests/export/test_kept_decisions.py).
"""

from __future__ import annotations

import hashlib
import struct
import sys
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate, pairwise
from typing import Any, NamedTuple

import orjson
import zstandard

from engines.base import Action, State
from engines.observation_json import ObservationWriter
from referee.match import replay
from referee.match.replay import Record, StepRecord
from referee.match.rerun import engine_for, initial_state, state_after

ALL_SEATS = (1 << 16) - 1
"""A seat mask with every seat a match may have."""

FIELDS = ("match_id", "game", "game_version", "num_players", "finished_at", "step", "seat",
          "bot_id", "bot_version", "rank", "score", "fault", "action", "legal_actions",
          "observation")
"""A record's fields, in the order every record is written."""


Json = bytes | memoryview
"""JSON text, or a view of it in a kept decisions' buffer (no copy)."""


class Decision(NamedTuple):
    """One decision of a match: its step, the seat to move, the observation and legal
    actions as JSON, the action recorded (None: forfeited) and the fault's code."""

    step: int
    seat: int
    observation: Json
    legal_actions: Json
    action: Action | None
    fault: str | None


KEPT_MAGIC = b"RK1"
"""The stored form of kept decisions: this, then zstd(the digest of the moves they follow
(`moves_digest`), their count n, 2n lengths (uint32, little-endian: each step's observation
and legal actions), then those JSON texts one after the other)."""
KEPT_LEVEL = 1  # zstd's fastest level: 5-15 µs a decision, 100-200 bytes a decision kept
KEPT_MAX_BYTES = 1 << 26  # a match's observations unpacked: 0.5-2 MB; more is no match's
_HEAD = struct.Struct("<32sI")


class KeptDecisions:
    """The JSON a match's driver sent for each decision, from its first step on, kept until
    the match ends (`packed`)."""

    def __init__(self) -> None:
        self.written: list[bytes] = []  # per step: its observation, its legal actions

    def keep(self, step: int, observation: bytes, legal_actions: bytes) -> None:
        """Keep the decision of `step`, if it is the next one (a step asked again, or one
        after a gap, changes nothing: `packed` then finds the count short)."""
        if 2 * step == len(self.written):
            self.written += (observation, legal_actions)

    def packed(self, record: Record) -> bytes | None:
        """The stored form, when every step of the match's `record` was kept; else None."""
        steps = len(record["steps"])
        if len(self.written) != 2 * steps:
            return None
        lengths = _uint32s(len(part) for part in self.written)
        data = b"".join((_HEAD.pack(moves_digest(record), steps), lengths, *self.written))
        return KEPT_MAGIC + zstandard.ZstdCompressor(level=KEPT_LEVEL).compress(data)


def moves_digest(record: Record) -> bytes:
    """What the observations of a match follow from: its id, seed, setup and every step's
    seat, action and fault, hashed."""
    return hashlib.sha256(replay.canonical(
        [record["match_id"], record["game"], record["game_version"], record["seed"],
         record["options"], [[step["seat"], step["action"], _fault_code(step)]
                             for step in record["steps"]]])).digest()


def unpack_kept(stored: bytes, record: Record) -> list[memoryview] | None:
    """Each step's observation and legal actions as JSON, in turn, from
    `KeptDecisions.packed` (views of one buffer), when they were kept for `record` (its
    moves, one per step); None when they were not, or cannot be read."""
    if not stored.startswith(KEPT_MAGIC):
        return None
    frame = stored[len(KEPT_MAGIC):]
    try:
        if not 0 <= zstandard.frame_content_size(frame) <= KEPT_MAX_BYTES:
            return None
        data = memoryview(zstandard.ZstdDecompressor().decompress(frame))
        digest, count = _HEAD.unpack_from(data)
    except (zstandard.ZstdError, struct.error):
        return None
    body = _HEAD.size + 8 * count
    if count != len(record["steps"]) or body > len(data) or digest != moves_digest(record):
        return None
    bounds = list(accumulate(_read_uint32s(data[_HEAD.size:body]), initial=body))
    if bounds[-1] != len(data):
        return None
    return [data[begin:end] for begin, end in pairwise(bounds)]


def _uint32s(values: Iterable[int]) -> bytes:
    numbers = array("I", values)
    if sys.byteorder == "big":
        numbers.byteswap()
    return numbers.tobytes()


def _read_uint32s(data: memoryview) -> array:
    numbers = array("I")
    numbers.frombytes(data)
    if sys.byteorder == "big":
        numbers.byteswap()
    return numbers


def decisions(record: Record, seats: int = ALL_SEATS, start: int = 0,
              kept: bytes | None = None) -> Iterator[Decision]:
    """The decisions of the seats in the mask `seats` (bit n: seat n) from step `start` on,
    in step order: from the `kept` decisions when they fit the record, else from one pass
    over the record (`rerun.RecordError` for a game version this referee does not have)."""
    written = None if kept is None else unpack_kept(kept, record)
    if written is not None:
        yield from _kept_decisions(record, written, seats, start)
        return
    engine = engine_for(record)
    wanted = [step for step in record["steps"]
              if step["step"] >= start and seats >> step["seat"] & 1]
    if not wanted:
        return
    last = wanted[-1]["step"]
    writer = ObservationWriter(engine)
    state = initial_state(engine, record)
    for step in record["steps"]:
        if step["step"] >= start and seats >> step["seat"] & 1:
            yield _decision(writer, state, step)
        if step["step"] == last:
            return
        state = state_after(engine, state, step)


def _kept_decisions(record: Record, written: list[memoryview], seats: int,
                    start: int) -> Iterator[Decision]:
    for index, step in enumerate(record["steps"]):
        if step["step"] >= start and seats >> step["seat"] & 1:
            yield Decision(step["step"], step["seat"], written[2 * index],
                           written[2 * index + 1], step["action"], _fault_code(step))


def _decision(writer: ObservationWriter, state: State, step: StepRecord) -> Decision:
    written = writer.write(state, step["seat"])
    return Decision(step["step"], step["seat"], written.observation, written.legal_actions_json,
                    step["action"], _fault_code(step))


def _fault_code(step: StepRecord) -> str | None:
    fault = step["fault"]
    return None if fault is None else fault["code"]


@dataclass(frozen=True)
class MatchRecords:
    """What every record of one finished match shares, and its records as NDJSON lines."""

    match_id: str
    game: str
    game_version: str
    num_players: int
    finished_at: str | None
    bots: tuple[tuple[str | None, int | None], ...]  # per seat: bot id and version
    ranks: tuple[int, ...]
    scores: tuple[Any, ...]

    @classmethod
    def of(cls, record: Record) -> MatchRecords:
        result = record["result"]
        if result is None:
            raise ValueError(f"match {record['match_id']} has no result")
        return cls(record["match_id"], record["game"], record["game_version"],
                   record["num_players"], record["finished_at"],
                   tuple(_bot(seat) for seat in record["seats"]),
                   tuple(result["ranks"]), tuple(result["scores"]))

    def line(self, decision: Decision) -> bytes:
        """The record as one line of NDJSON (newline included): the `FIELDS` in order, as
        orjson writes them."""
        return b"".join(self._parts(decision))

    def line_parts(self, found: Iterable[Decision]) -> list[Json]:
        """The records of `found` as NDJSON, in parts to write one after the other (the
        observations not copied: `referee export` hands them to `os.writev`)."""
        return [part for decision in found for part in self._parts(decision)]

    def _parts(self, decision: Decision) -> tuple[Json, ...]:
        return (self._shared, b',"step":', b"%d" % decision.step, self._seats[decision.seat],
                b',"fault":', orjson.dumps(decision.fault), b',"action":',
                orjson.dumps(decision.action), b',"legal_actions":', decision.legal_actions,
                b',"observation":', decision.observation, b"}\n")

    @cached_property
    def _shared(self) -> bytes:
        """The fields every record of the match has, as its lines start."""
        return orjson.dumps({"match_id": self.match_id, "game": self.game,
                             "game_version": self.game_version,
                             "num_players": self.num_players,
                             "finished_at": self.finished_at})[:-1]

    @cached_property
    def _seats(self) -> list[bytes]:
        """Per seat, its fields (seat, bot, version, rank, score) after a comma."""
        return [b"," + orjson.dumps({"seat": seat, "bot_id": bot_id, "bot_version": version,
                                     "rank": rank, "score": score})[1:-1]
                for seat, ((bot_id, version), rank, score)
                in enumerate(zip(self.bots, self.ranks, self.scores, strict=True))]

    def columns(self, found: list[Decision]) -> dict[str, list[Any]]:
        """The records of `found` as columns, in `FIELDS` order, the JSON fields as JSON
        text (a null action as None)."""
        seats = [decision.seat for decision in found]
        shared = {"match_id": self.match_id, "game": self.game,
                  "game_version": self.game_version, "num_players": self.num_players,
                  "finished_at": self.finished_at}
        columns: dict[str, list[Any]] = {name: [value] * len(found)
                                         for name, value in shared.items()}
        columns.update(
            step=[decision.step for decision in found], seat=seats,
            bot_id=[self.bots[seat][0] for seat in seats],
            bot_version=[self.bots[seat][1] for seat in seats],
            rank=[self.ranks[seat] for seat in seats],
            score=[self.scores[seat] for seat in seats],
            fault=[decision.fault for decision in found],
            action=[None if decision.action is None else orjson.dumps(decision.action)
                    for decision in found],
            legal_actions=[bytes(decision.legal_actions) for decision in found],
            observation=[bytes(decision.observation) for decision in found])
        return columns


def _bot(seat: Any) -> tuple[str | None, int | None]:
    """A seat's bot id and version (a bot seat recorded before versions played version 1;
    a pull seat has neither)."""
    if seat.get("kind") != "bot":
        return None, None
    return seat.get("bot_id"), seat.get("version", 1)


def seat_mask(seats: Iterable[int]) -> int:
    """The mask of `seats` (bit n: seat n)."""
    mask = 0
    for seat in seats:
        mask |= 1 << seat
    return mask
