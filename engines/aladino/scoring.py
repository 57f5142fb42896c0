"""Treasure points: a function of one player board alone (rulebook "How to Get Treasure
Points"), and the result: the most points wins, ties shared.

A board is `board[kind_index][value - 1]`: the list of token ids stacked on that square.
"""

from __future__ import annotations

from engines.base import ranks_from_scores
from engines.types import Result, State

from .components import KINDS, TOKENS, VALUES

Board = list[list[list[int]]]

ROW_BONUS = 5
COLUMN_BONUS = 5
TRIO_BONUS = 3
SORCERER_POINTS = -3
PRINCESS_CARPET_BONUS = 2
FAVOURITE_POINTS = 1
FAVOURITE_PRINCESS_POINTS = 2


def favourite_of(seat: int) -> str:
    """Seat i's board has kind i as its favourite treasure (rules/aladino.md, Players)."""
    return KINDS[seat]


def empty_board() -> Board:
    return [[[] for _ in VALUES] for _ in KINDS]


def token_points(token_id: int) -> int:
    """Points printed on a token: its value; the Evil Sorcerer -3; the Genie 0."""
    token = TOKENS[token_id]
    if token.character == "sorcerer":
        return SORCERER_POINTS
    return token.value


def favourite_points(token_id: int, favourite: str) -> int:
    """+1 for a token of the favourite kind, +2 for a favourite Princess; never for a Genie."""
    token = TOKENS[token_id]
    if token.kind != favourite:
        return 0
    return FAVOURITE_PRINCESS_POINTS if token.character == "princess" else FAVOURITE_POINTS


def breakdown(board: Board, favourite: str) -> dict[str, int]:
    """Every source of points on a board, and their total."""
    ids = [t for row in board for square in row for t in square]
    parts = {
        "tokens": sum(token_points(t) for t in ids),
        "favourite": sum(favourite_points(t, favourite) for t in ids),
        "princess_carpet": sum(_princess_carpet(row) for row in board),
        "rows": ROW_BONUS * sum(all(row) for row in board),
        "columns": COLUMN_BONUS * sum(all(row[v] for row in board) for v in range(len(VALUES))),
        "trios": TRIO_BONUS * sum(len(square) // 3 for row in board for square in row),
    }
    parts["total"] = sum(parts.values())
    return parts


def score(board: Board, favourite: str) -> int:
    return breakdown(board, favourite)["total"]


def result(state: State) -> Result:
    scores = list(state["scores"])
    return {
        "scores": scores,
        "ranks": ranks_from_scores(scores),
        "details": {"breakdown": [breakdown(board, favourite_of(p))
                                  for p, board in enumerate(state["boards"])]},
    }


def is_full(board: Board) -> bool:
    return all(square for row in board for square in row)


def _princess_carpet(row: list[list[int]]) -> int:
    ids = [t for square in row for t in square]
    has_carpet = any(TOKENS[t].character == "carpet" for t in ids)
    princesses = sum(TOKENS[t].character == "princess" for t in ids)
    return PRINCESS_CARPET_BONUS * princesses if has_carpet else 0
