"""The cave: where Aladdin's moves stop and which tokens the Magic Carpet may take."""

from __future__ import annotations

from engines.types import State

from .components import RAY, TOKENS


def destination(state: State, direction: int) -> int | None:
    """Where a move of `roll` token spaces in `direction` stops, or None if no token lies along it.

    Empty spaces are passed over uncounted; at the wall Aladdin stops on the last token reached.
    """
    cells, roll = state["cells"], state["roll"]
    counted, last_token = 0, None
    for cell in RAY[state["aladdin"]][direction]:
        if counted >= roll:
            break
        if cells[cell] is not None:
            counted += 1
            last_token = cell
    return last_token


def legal_directions(state: State) -> list[int]:
    """The directions with a token along them: where `destination` is not None (the roll
    is 1 or more)."""
    cells = state["cells"]
    return [d for d, ray in enumerate(RAY[state["aladdin"]]) if _token_along(cells, ray)]


def can_move(state: State) -> bool:
    """Some direction is legal (`legal_directions` is not empty)."""
    cells = state["cells"]
    for ray in RAY[state["aladdin"]]:  # noqa: SIM110 (a loop costs less than a generator)
        if _token_along(cells, ray):
            return True
    return False


def _token_along(cells: list[int | None], ray: tuple[int, ...]) -> bool:
    for cell in ray:  # noqa: SIM110 (a loop costs less than a generator)
        if cells[cell] is not None:
            return True
    return False


def shows_character(state: State, token: int) -> bool:
    """The token lies face up with a character on it (the Magic Carpet may not take it)."""
    return bool(state["up"][token]) and TOKENS[token].character is not None


def carpet_targets(state: State) -> list[int]:
    """Token spaces that do not show a character face up."""
    return [
        c for c, t in enumerate(state["cells"]) if t is not None and not shows_character(state, t)
    ]
