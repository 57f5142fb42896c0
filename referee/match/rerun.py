"""Re-running a record: the one loop from seed + actions to every state of a match.

A replay holds no states, only what made them: the seed, the options, the player count and
each step's action. Everything that needs a state again (a stored replay's hashes, a
verification, the view at a step, a step's view in a live stream) re-runs the record here,
and everything that needs the strikes and the forfeit of recorded steps (a resumed match, a
verification) counts them with `Tally`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import engines
from engines.base import State
from referee.errors import RefereeError
from referee.match import replay
from referee.match.replay import ForfeitRecord, Record, StepRecord

FORFEIT = "forfeit"
Step = StepRecord
StepApplier = Callable[[engines.Game, State, Step], State]


class RecordError(RefereeError):
    """A record that cannot be re-run here: unknown game or game version."""


def engine_for(record: Record) -> engines.Game:
    """The engine that made `record`: its game at its `game_version`."""
    game, version = record.get("game"), record.get("game_version")
    if not isinstance(version, str):
        raise RecordError(f"the record names no game version ({version!r})")
    try:
        return engines.get(game, version)
    except engines.UnknownVersion as error:
        raise RecordError(f"{error.reason}; this referee cannot re-run it faithfully") from None
    except engines.UnknownGame as error:
        raise RecordError(error.reason) from None


def initial_state(engine: engines.Game, record: Record) -> State:
    """The state before the first step: the setup made again from the record."""
    return engine.new_game(record["num_players"], record["seed"], record["options"])


def state_after(engine: engines.Game, state: State, step: Step) -> State:
    """The state after a recorded step (a forfeited step, with no action, changes nothing)."""
    return state if step["action"] is None else engine.apply(state, step["action"])


def rerun(engine: engines.Game, record: Record, apply: StepApplier = state_after,
          start: State | None = None) -> Iterator[tuple[Step, State]]:
    """Every recorded step with the state it led to, re-run from `start` (by default the
    record's initial state); `apply` plays a step (a verifier checks each as it plays it)."""
    state = initial_state(engine, record) if start is None else start
    for step in record["steps"]:
        state = apply(engine, state, step)
        yield step, state


def with_state_hashes(engine: engines.Game, record: Record) -> list[Step]:
    """The record's steps, each with the hash of the state it led to (re-run): how a
    record is read back whose steps were stored without them, or were played without them
    (a `referee-replay/3` match between its checkpoints)."""
    return [replay.with_state_hash(step, replay.state_hash(after, record["format"]))
            for step, after in rerun(engine, record)]


def state_before(engine: engines.Game, record: Record, step: int) -> State:
    """The state in which the decision of `step` was asked."""
    state = initial_state(engine, record)
    for played in record["steps"][:step]:
        state = state_after(engine, state, played)
    return state


@dataclass
class Tally:
    """The strikes per seat and the forfeit that recorded steps add up to."""

    strikes: list[int]
    forfeit: ForfeitRecord | None = None

    @classmethod
    def of(cls, num_seats: int, steps: Iterable[Step] = ()) -> Tally:
        tally = cls([0] * num_seats)
        for step in steps:
            tally.count(step)
        return tally

    def count(self, step: Step) -> None:
        """Add one recorded step: a fault is a strike, a forfeit ends the match."""
        if step["fault"]:
            self.strikes[step["seat"]] += 1
            if step["fault"]["policy"] == FORFEIT:
                self.forfeit = {"seat": step["seat"], "step": step["step"],
                                "fault": step["fault"]["code"]}
