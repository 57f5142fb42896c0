"""What a seat may see: everything but the faces of face-down tokens (and the future dice);
`hidden_variant` swaps the face-down tokens that show the same back."""

from __future__ import annotations

from typing import Literal, TypedDict

from engines.base import clone
from engines.rng import Rng
from engines.types import State

from .components import CELLS, TOKENS, TokenJson, back, token_json
from .scoring import Board, favourite_of


class FaceUp(TokenJson):
    face: Literal["up"]


class FaceDown(TypedDict):
    face: Literal["down"]
    back: str


class Space(TypedDict):
    space: list[int]
    token: FaceUp | FaceDown | None


BoardView = list[list[list[TokenJson]]]


class View(TypedDict):
    phase: str
    turn: int
    roll: int
    aladdin: list[int]
    cave: list[Space]
    boards: list[BoardView]
    favourites: list[str]
    scores: list[int]
    pending_genie: TokenJson | None


def view(state: State) -> View:
    """The same for every seat and the spectator: Aladino has no secrets in hand."""
    return {
        "phase": state["phase"],
        "turn": state["turn"],
        "roll": state["roll"],
        "aladdin": list(CELLS[state["aladdin"]]),
        "cave": [space_view(state, c) for c in range(len(CELLS))],
        "boards": [board_view(board) for board in state["boards"]],
        "favourites": [favourite_of(p) for p in range(state["num_players"])],
        "scores": list(state["scores"]),
        "pending_genie": token_json(TOKENS[state["pending"]]) if state["pending"] is not None
        else None,
    }


def space_view(state: State, cell: int) -> Space:
    token = state["cells"][cell]
    space: Space = {"space": list(CELLS[cell]), "token": None}
    if token is not None:
        if state["up"][token]:
            space["token"] = {"face": "up", **token_json(TOKENS[token])}
        else:
            space["token"] = {"face": "down", "back": back(TOKENS[token])}
    return space


def board_view(board: Board) -> BoardView:
    return [[[token_json(TOKENS[t]) for t in square] for square in row] for row in board]


def hidden_variant(state: State, rng: Rng) -> State:
    """Face-down tokens with the same back swap places; the future dice change."""
    variant: State = clone(state)
    by_back: dict[str, list[int]] = {}
    for cell, token in enumerate(variant["cells"]):
        if token is not None and not variant["up"][token]:
            by_back.setdefault(back(TOKENS[token]), []).append(cell)
    for cells in by_back.values():
        tokens = [variant["cells"][c] for c in cells]
        rng.shuffle(tokens)
        for cell, token in zip(cells, tokens, strict=True):
            variant["cells"][cell] = token
    variant["rng"] = rng.next64()
    return variant
