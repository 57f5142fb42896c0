"""Build Aladino positions by hand for the rules tests."""

import engines
from engines.aladino.components import CELL_INDEX, CELLS, KINDS, TOKENS

GAME = engines.get("aladino")


def blank(num_players: int = 2, aladdin=(0, 0), roll: int = 1, seed: int = 0) -> dict:
    """A game at seat 0's move with an empty cave, no taken tokens and a chosen roll."""
    state = GAME.new_game(num_players=num_players, seed=seed, options={})
    state["cells"] = [None] * len(CELLS)
    state["aladdin"] = CELL_INDEX[aladdin]
    state["roll"] = roll
    state["phase"] = "move"
    state["turn"] = 0
    state["log"] = []
    return state


def token(kind: str | None, value: int, character: str | None = None, nth: int = 0) -> int:
    """The id of the nth token with that kind, value and character."""
    matches = [t.id for t in TOKENS if (t.kind, t.value, t.character) == (kind, value, character)]
    return matches[nth]


def genie(nth: int = 0) -> int:
    return token(None, 0, "genie", nth)


def put(state: dict, space, token_id: int, up: bool = True) -> None:
    state["cells"][CELL_INDEX[tuple(space)]] = token_id
    state["up"][token_id] = up


def fill(state: dict, seat: int, kind: str, value: int, *token_ids: int) -> None:
    """Put tokens straight onto a player board square, as if taken earlier."""
    state["boards"][seat][KINDS.index(kind)][value - 1].extend(token_ids)


def move(state: dict, direction: int) -> dict:
    return GAME.apply(state, {"type": "move", "direction": direction})


def aladdin(state: dict) -> tuple[int, int]:
    return CELLS[state["aladdin"]]


def filler_tokens(exclude=()) -> list[int]:
    """Plain tokens, one per square order, for filling boards in scoring tests."""
    return [t.id for t in TOKENS if t.character is None and t.id not in exclude]
