"""What a seat may see: everything but the faces of face-down tokens (and the future dice);
`hidden_variant` swaps the face-down tokens that show the same back."""

from __future__ import annotations

from functools import partial
from typing import Any, Literal, TypedDict

import orjson

from engines.base import clone
from engines.rng import Rng
from engines.types import State
from engines.view_memo import Memo, kept_json

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
    return view_with(state, cave_view(state), [board_view(board) for board in state["boards"]])


def view_parts(state: State, memo: Memo) -> View:
    """`view`, the cave and the boards as JSON, each board and each of its rows kept in
    `memo` by the board or row it shows (engines.observation_json): a move changes one row
    of one board."""
    return view_with(state, cave_json(state), [
        orjson.Fragment(memo.json(seat, board, partial(board_json, memo, seat, board)))
        for seat, board in enumerate(state["boards"])])


def board_json(memo: Memo, seat: int, board: Board) -> orjson.Fragment:
    """`board_view` as JSON, each row kept in `memo`."""
    return orjson.Fragment(b"[" + b",".join([memo.json((seat, number), row, partial(row_view, row))
                                             for number, row in enumerate(board)]) + b"]")


def view_with(state: State, cave: Any, boards: Any) -> View:
    """The view around its cave and boards (as lists, or as JSON fragments)."""
    return {
        "phase": state["phase"],
        "turn": state["turn"],
        "roll": state["roll"],
        "aladdin": list(CELLS[state["aladdin"]]),
        "cave": cave,
        "boards": boards,
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


def cave_json(state: State) -> orjson.Fragment:
    """`cave_view` as JSON, from each space's JSON written once per token and face (most
    moves change the cave)."""
    up = state["up"]
    return orjson.Fragment(b"[" + b",".join([
        EMPTY_SPACE_JSON[cell] if token is None else SPACE_JSON[cell][token][up[token]]
        for cell, token in enumerate(state["cells"])]) + b"]")


def _space_json(cell: int, token: int | None, face_up: bool) -> bytes:
    return kept_json({"space": list(CELLS[cell]), "token": None if token is None
                      else FACE_UP_JSON[token] if face_up else FACE_DOWN_JSON[token]})


EMPTY_SPACE_JSON = tuple(_space_json(cell, None, False) for cell in range(len(CELLS)))
SPACE_JSON = tuple(tuple((_space_json(cell, token, False), _space_json(cell, token, True))
                         for token in range(len(TOKENS))) for cell in range(len(CELLS)))
"""Per cell, per token, face down and face up: the JSON of a space of `cave_view`."""


def board_view(board: Board) -> BoardView:
    return [row_view(row) for row in board]


def row_view(row: list[list[int]]) -> list[list[TokenJson]]:
    return [[TOKEN_JSON[t].copy() for t in square] for square in row]


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
