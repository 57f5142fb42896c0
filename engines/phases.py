"""Moves declared phase by phase, one table per game (boardgame.io's phases and moves).

A game's `Phases` maps each step of play (`step(state)`, by default `state["phase"]`) to
its moves: action type -> `Move(legal, apply)`. `legal(state)` lists that move's legal
actions in a fixed order, and a step's legal actions are its moves' lists in table order;
`apply(state, action, rng)` resolves a canonical action (its shape already checked
against the action schema), raising IllegalAction for one the rules forbid now. An action
type the step does not list is refused here, with the types it accepts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .errors import IllegalAction
from .rng import Rng
from .types import Action, State

A = TypeVar("A")


@dataclass(frozen=True)
class Move(Generic[A]):
    """One action type of a phase: its legal actions now, and how one is applied."""

    legal: Callable[[State], list[A]]
    apply: Callable[[State, A, Rng], None]


Phase = Mapping[str, Move[Any]]


def current_phase(state: State) -> str:
    phase: str = state["phase"]
    return phase


class Phases:
    """Every move of a game, by step of play; a step absent from the table (the end of
    the game) has none."""

    def __init__(self, table: Mapping[str, Phase],
                 step: Callable[[State], str] = current_phase):
        self.table = table
        self.step = step

    def legal_actions(self, state: State) -> list[Action]:
        actions: list[Action] = []
        for move in self.table.get(self.step(state), {}).values():
            actions.extend(move.legal(state))
        return actions

    def apply(self, state: State, action: Action, rng: Rng) -> None:
        step = self.step(state)
        moves = self.table.get(step, {})
        move = moves.get(action["type"])
        if move is None:
            raise IllegalAction(f'a "{action["type"]}" action is not possible now: the game '
                                f"waits for {either(list(moves))} ({step})")
        move.apply(state, action, rng)


def either(names: list[str]) -> str:
    """`a`, `a or b`, `a, b or c`."""
    if len(names) <= 1:
        return "".join(names) or "nothing"
    return f"{', '.join(names[:-1])} or {names[-1]}"
