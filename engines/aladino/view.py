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
        "cave": cave_view(state),
        "boards": [board_view(board) for board in state["boards"]],
        "favourites": [favourite_of(p) for p in range(state["num_players"])],
        "scores": list(state["scores"]),
        "pending_genie": token_json(TOKENS[state["pending"]]) if state["pending"] is not None
        else None,
    }


# Per token id, its JSON on a board, face up and face down in the cave: made once, copied
# into each view (a view is built at every decision: 61 spaces, every board).
TOKEN_JSON = tuple(token_json(token) for token in TOKENS)
FACE_UP_JSON = tuple(FaceUp(face="up", **token_json(token)) for token in TOKENS)
FACE_DOWN_JSON = tuple(FaceDown(face="down", back=back(token)) for token in TOKENS)


def cave_view(state: State) -> list[Space]:
    """Every space of the cave, with the face of its token where it is up."""
    up = state["up"]
    return [{"space": list(CELLS[cell]), "token": None if token is None
             else FACE_UP_JSON[token].copy() if up[token] else FACE_DOWN_JSON[token].copy()}
            for cell, token in enumerate(state["cells"])]


def board_view(board: Board) -> BoardView:
    return [[[TOKEN_JSON[t].copy() for t in square] for square in row] for row in board]


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
