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


# Per token id, computed once: what scoring reads for every token on a board.
POINTS = tuple(token_points(token.id) for token in TOKENS)
FAVOURITE_TABLE = {kind: tuple(favourite_points(token.id, kind) for token in TOKENS)
                   for kind in KINDS}
CARPETS = frozenset(token.id for token in TOKENS if token.character == "carpet")
PRINCESSES = frozenset(token.id for token in TOKENS if token.character == "princess")


def breakdown(board: Board, favourite: str) -> dict[str, int]:
    """Every source of points on a board, and their total. (Plain loops: it runs on every
    placement, and loops over a few tokens cost less than comprehensions.)"""
    favourite_table = FAVOURITE_TABLE[favourite]
    tokens = favourites = princess_carpet = rows = trios = 0
    for row in board:
        ids: list[int] = []
        for square in row:
            if square:
                ids += square
                trios += len(square) // 3
        for token in ids:
            tokens += POINTS[token]
            favourites += favourite_table[token]
        rows += all(row)
        if not CARPETS.isdisjoint(ids):  # per Princess in a row with a Magic Carpet
            princess_carpet += PRINCESS_CARPET_BONUS * sum(token in PRINCESSES for token in ids)
    parts = {
        "tokens": tokens,
        "favourite": favourites,
        "princess_carpet": princess_carpet,
        "rows": ROW_BONUS * rows,
        "columns": COLUMN_BONUS * sum(map(all, zip(*board, strict=True))),
        "trios": TRIO_BONUS * trios,
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
