"""The cave: where Aladdin's moves stop and which tokens the Magic Carpet may take."""

from __future__ import annotations

from engines.types import State

from .components import DIRECTIONS, NEIGHBOUR, TOKENS


def destination(state: State, direction: int) -> int | None:
    """Where a move of `roll` token spaces in `direction` stops, or None if no token lies along it.

    Empty spaces are passed over uncounted; at the wall Aladdin stops on the last token reached.
    """
    cells, roll = state["cells"], state["roll"]
    cell: int = state["aladdin"]
    counted, last_token = 0, None
    while counted < roll:
        cell = NEIGHBOUR[cell][direction]
        if cell < 0:
            break
        if cells[cell] is not None:
            counted += 1
            last_token = cell
    return last_token


def legal_directions(state: State) -> list[int]:
    return [d for d in range(len(DIRECTIONS)) if destination(state, d) is not None]


def shows_character(state: State, token: int) -> bool:
    """The token lies face up with a character on it (the Magic Carpet may not take it)."""
    return bool(state["up"][token]) and TOKENS[token].character is not None


def carpet_targets(state: State) -> list[int]:
    """Token spaces that do not show a character face up."""
    return [
        c for c, t in enumerate(state["cells"]) if t is not None and not shows_character(state, t)
    ]
