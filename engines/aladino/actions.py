"""Every decision a seat can take, phase by phase: its legal actions and its handler."""

from __future__ import annotations

from typing import Literal, TypedDict

from engines.base import log_event
from engines.errors import IllegalAction
from engines.phases import Move, Phases
from engines.rng import Rng
from engines.types import State

from . import flow
from .cave import carpet_targets, destination, legal_directions, shows_character
from .components import CELL_INDEX, CELLS, DIRECTION_NAMES, KINDS, VALUES


class MoveAction(TypedDict):
    type: Literal["move"]
    direction: int


class PlaceGenieAction(TypedDict):
    type: Literal["place_genie"]
    kind: str
    value: int


class CarpetAction(TypedDict):
    type: Literal["carpet"]
    space: list[int]


def legal_moves(state: State) -> list[MoveAction]:
    return [{"type": "move", "direction": d} for d in legal_directions(state)]


def do_move(state: State, action: MoveAction, rng: Rng) -> None:
    direction = action["direction"]
    target = destination(state, direction)
    if target is None:
        raise IllegalAction(
            f"no token lies {DIRECTION_NAMES[direction]} of Aladdin: the movement must go "
            "through squares with Treasure tokens on them"
        )
    log_event(state, "move", {"seat": state["turn"], "direction": direction,
                              "from": list(CELLS[state["aladdin"]]), "to": list(CELLS[target])})
    flow.take(state, target, rng)


def legal_genie_squares(state: State) -> list[PlaceGenieAction]:
    return [{"type": "place_genie", "kind": k, "value": v} for k in KINDS for v in VALUES]


def do_place_genie(state: State, action: PlaceGenieAction, rng: Rng) -> None:
    flow.place(state, state["pending"], action["kind"], action["value"], rng)


def legal_flights(state: State) -> list[CarpetAction]:
    return [{"type": "carpet", "space": list(CELLS[c])} for c in carpet_targets(state)]


def do_carpet(state: State, action: CarpetAction, rng: Rng) -> None:
    cell = CELL_INDEX[(action["space"][0], action["space"][1])]
    token = state["cells"][cell]
    if token is None:
        raise IllegalAction(
            f"space {list(CELLS[cell])} is empty: the Magic Carpet flies to a token"
        )
    if shows_character(state, token):
        raise IllegalAction(
            f"the token on {list(CELLS[cell])} shows a character: the Magic Carpet may only take "
            "a token that hasn't a visible character on it"
        )
    log_event(state, "carpet", {"seat": state["turn"],
                                "from": list(CELLS[state["aladdin"]]), "to": list(CELLS[cell])})
    flow.take(state, cell, rng)


PHASES = Phases({
    flow.MOVE: {"move": Move(legal_moves, do_move)},
    flow.PLACE_GENIE: {"place_genie": Move(legal_genie_squares, do_place_genie)},
    flow.CARPET: {"carpet": Move(legal_flights, do_carpet)},
})
