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
from typing import Any

import engines
from engines.base import State

FORFEIT = "forfeit"
Step = dict[str, Any]
StepApplier = Callable[[engines.Game, State, Step], State]


class RecordError(Exception):
    """A record that cannot be re-run here: unknown game or game version."""


def engine_for(record: dict[str, Any]) -> engines.Game:
    """The engine that made `record`: its game at its `game_version`."""
    try:
        engine = engines.get(record.get("game"))  # type: ignore[arg-type]
    except engines.UnknownGame as error:
        raise RecordError(error.reason) from None
    if record.get("game_version") != engine.version:
        raise RecordError(
            f"this replay was made under {engine.name} version {record.get('game_version')!r}"
            f"; this referee has version {engine.version!r} of the rules, so it cannot "
            "re-run it faithfully")
    return engine


def initial_state(engine: engines.Game, record: dict[str, Any]) -> State:
    """The state before the first step: the setup made again from the record."""
    return engine.new_game(record["num_players"], record["seed"], record["options"])


def state_after(engine: engines.Game, state: State, step: Step) -> State:
    """The state after a recorded step (a forfeited step, with no action, changes nothing)."""
    return state if step["action"] is None else engine.apply(state, step["action"])


@dataclass(frozen=True)
class Replayed:
    """One recorded step re-run: the state it was decided in and the state it led to."""

    index: int
    step: Step
    before: State
    after: State


def rerun(engine: engines.Game, record: dict[str, Any], steps: Iterable[Step] | None = None,
          apply: StepApplier = state_after) -> Iterator[Replayed]:
    """Every step of `record` (or the first `steps` of it) re-run from its initial state;
    `apply` plays a step (a verifier checks each step as it plays it)."""
    state = initial_state(engine, record)
    for index, step in enumerate(record["steps"] if steps is None else steps):
        after = apply(engine, state, step)
        yield Replayed(index, step, state, after)
        state = after


def state_before(engine: engines.Game, record: dict[str, Any], step: int) -> State:
    """The state in which the decision of `step` was asked."""
    state = initial_state(engine, record)
    for replayed in rerun(engine, record, record["steps"][:step]):
        state = replayed.after
    return state


@dataclass
class Tally:
    """The strikes per seat and the forfeit that recorded steps add up to."""

    strikes: list[int]
    forfeit: dict[str, Any] | None = None

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
