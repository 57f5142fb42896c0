"""A finished record's decisions as training records (issue 30, `referee export`).

One record per decision: the match, the step and the seat, the bot and its version, the
observation the seat decided on (`game.observation(state, seat)`, exactly what the bot was
sent), its legal actions, the action recorded (the substituted move under the `random`
policy, null for a forfeit; `fault` says which), and the seat's final rank and score.

The observations come from one pass over the record: the steps applied in order from its
seed, each decision's observation written on the way by an `ObservationWriter`
(engines.observation_json: the same bytes as `orjson.dumps(observation)`, without writing
again what the seat's previous observation wrote, its log above all).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from engines.base import Action, State
from engines.observation_json import ObservationWriter
from referee.match.replay import Record, StepRecord
from referee.match.rerun import engine_for, initial_state, state_after

ALL_SEATS = (1 << 16) - 1
"""A seat mask with every seat a match may have."""

FIELDS = ("match_id", "game", "game_version", "num_players", "finished_at", "step", "seat",
          "bot_id", "bot_version", "rank", "score", "fault", "action", "legal_actions",
          "observation")
"""A record's fields, in the order every record is written."""


class Decision(NamedTuple):
    """One decision of a match: its step, the seat to move, the observation and legal
    actions as JSON, the action recorded (None: forfeited) and the fault's code."""

    step: int
    seat: int
    observation: bytes
    legal_actions: bytes
    action: Action | None
    fault: str | None


def decisions(record: Record, seats: int = ALL_SEATS, start: int = 0) -> Iterator[Decision]:
    """The decisions of the seats in the mask `seats` (bit n: seat n) from step `start` on,
    in step order, from one pass over the record (`rerun.RecordError` for a game version
    this referee does not have)."""
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


def _decision(writer: ObservationWriter, state: State, step: StepRecord) -> Decision:
    written = writer.write(state, step["seat"])
    fault = step["fault"]
    return Decision(step["step"], step["seat"], written.observation, written.legal_actions_json,
                    step["action"], None if fault is None else fault["code"])


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

    def fields(self, decision: Decision) -> dict[str, Any]:
        """The record of `decision`, its JSON fields as `orjson.Fragment`s, in `FIELDS`
        order."""
        seat = decision.seat
        bot_id, bot_version = self.bots[seat]
        return {"match_id": self.match_id, "game": self.game, "game_version": self.game_version,
                "num_players": self.num_players, "finished_at": self.finished_at,
                "step": decision.step, "seat": seat, "bot_id": bot_id,
                "bot_version": bot_version, "rank": self.ranks[seat],
                "score": self.scores[seat], "fault": decision.fault, "action": decision.action,
                "legal_actions": orjson.Fragment(decision.legal_actions),
                "observation": orjson.Fragment(decision.observation)}

    def line(self, decision: Decision) -> bytes:
        """The record as one line of NDJSON (newline included)."""
        return orjson.dumps(self.fields(decision), option=orjson.OPT_APPEND_NEWLINE)

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
            legal_actions=[decision.legal_actions for decision in found],
            observation=[decision.observation for decision in found])
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
