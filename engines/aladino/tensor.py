"""Aladino's observation tensor (engines.tensor), 1,363 floats:

phase (4), the seat to move (4, relative), the observer's own seat (4: it fixes the
favourite kind), the number of players (4), the die (4), Aladdin's space (61); per space of
the cave (61 x 17): empty, face down by back (5), face up by kind or Genie (5), by value
(5), whether it is its square's character token; per seat, relative (4 x 20 squares x 3):
the plain tokens, the character token and the Genies on each square of its board; per seat
its score; whether a Genie waits to be placed.
"""

from __future__ import annotations

from engines.tensor import Writer, relative
from engines.types import JsonObject

from .components import CELL_INDEX, CELLS, DIE_SIDES, KINDS, TOKENS, VALUES
from .determinize import BACKS
from .schemas import MAX_SEATS, PHASES
from .scoring import (
    COLUMN_BONUS,
    FAVOURITE_PRINCESS_POINTS,
    PRINCESS_CARPET_BONUS,
    ROW_BONUS,
    TRIO_BONUS,
    token_points,
)

MOST_PLAIN = max(sum(1 for t in TOKENS if (t.kind, t.value, t.character) == (k, v, None))
                 for k in KINDS for v in VALUES)
GENIES = sum(1 for t in TOKENS if t.kind is None)
LOWEST_SCORE = sum(min(0, token_points(t.id)) for t in TOKENS)
HIGHEST_SCORE = (sum(max(0, token_points(t.id)) + FAVOURITE_PRINCESS_POINTS for t in TOKENS)
                 + PRINCESS_CARPET_BONUS * sum(1 for t in TOKENS if t.character == "princess")
                 + ROW_BONUS * len(KINDS) + COLUMN_BONUS * len(VALUES)
                 + TRIO_BONUS * (len(TOKENS) // 3))
"""Bounds of any board's score: every token's points and bonus at best, every bonus."""


SPACE_SIZE = 1 + len(BACKS) + len(KINDS) + 1 + len(VALUES) + 1
UP = 1 + len(BACKS)
SPACE_ENTRIES: dict[tuple[str, str | int], list[int]] = {
    **{("down", back): [1 + i] for i, back in enumerate(BACKS)},
    **{("up", t.id): [UP + len(KINDS)] if t.kind is None else
       [UP + KINDS.index(t.kind), UP + len(KINDS) + t.value,
        *([SPACE_SIZE - 1] if t.character else [])] for t in TOKENS},
}
"""Per token as a space shows it, the entries it sets of the space's part (empty: 0)."""
SQUARES = len(KINDS) * len(VALUES)
SQUARE_HIGH = [MOST_PLAIN, 1, GENIES] * SQUARES
"""Per square of a board: plain tokens, its character token, Genies."""


def write(w: Writer, observation: JsonObject) -> None:
    seats = len(observation["scores"])
    me = observation["seat"]
    w.one_hot(PHASES.index(observation["phase"]), len(PHASES))
    w.one_hot(relative(observation["to_move"], me, seats), MAX_SEATS)
    w.one_hot(me, MAX_SEATS)
    w.one_hot(seats - 1, MAX_SEATS)
    w.one_hot(observation["roll"] - 1, DIE_SIDES)
    w.one_hot(CELL_INDEX[(observation["aladdin"][0], observation["aladdin"][1])], len(CELLS))
    w.flags((SPACE_SIZE * cell + entry for cell, space in enumerate(observation["cave"])
             for entry in _space_entries(space["token"])), SPACE_SIZE * len(CELLS))
    boards = observation["boards"]
    for rel in range(MAX_SEATS):
        board = boards[(rel + (me or 0)) % seats] if rel < seats else []
        w.counts((3 * (row * len(VALUES) + column) + _square_entry(token)
                  for row, squares in enumerate(board) for column, square in enumerate(squares)
                  for token in square), 3 * SQUARES, SQUARE_HIGH)
    for rel in range(MAX_SEATS):
        score = observation["scores"][(rel + (me or 0)) % seats] if rel < seats else 0
        w.number(score, HIGHEST_SCORE, LOWEST_SCORE)
    w.flag(observation["pending_genie"] is not None)


def _space_entries(token: JsonObject | None) -> list[int]:
    if token is None:
        return [0]
    return SPACE_ENTRIES[("down", token["back"]) if token["face"] == "down" else
                         ("up", token["id"])]


def _square_entry(token: JsonObject) -> int:
    return 2 if token["kind"] is None else 0 if token["character"] is None else 1
