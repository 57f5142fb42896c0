"""Helpers for the Aldabas rules tests: find cards, finish setup, shape states by hand."""

import engines
from engines.aldabas.block import index
from engines.aldabas.components import CARD_COLOUR, CARD_TYPE

GAME = engines.get("aldabas")


def card(door_type: str, colour: str, nth: int = 0) -> int:
    """The id of the nth card of a door type and colour."""
    ids = [i for i, t in enumerate(CARD_TYPE) if t.id == door_type and CARD_COLOUR[i] == colour]
    return ids[nth]


def at(col: int, row: int) -> int:
    return index(col, row)


def new(num_players: int = 2, seed: int = 1, **options) -> dict:
    options.setdefault("mode", "solo" if num_players == 1 else "multi")
    return GAME.new_game(num_players=num_players, seed=seed, options=options)


def started(num_players: int = 2, seed: int = 1, **options) -> dict:
    """A game past setup: every seat vaults its first door and keeps the rest."""
    state = new(num_players, seed, **options)
    while state["phase"] in ("setup_vault", "setup_discard"):
        state = GAME.apply(state, GAME.legal_actions(state)[0])
    return state


def act(state: dict, kind: str, **fields) -> dict:
    return GAME.apply(state, {"type": kind, **fields})


def types_of(state: dict) -> set[str]:
    return {a["type"] for a in GAME.legal_actions(state)}


def trigger(state: dict) -> tuple[int | None, str] | None:
    """(seat, reason) of the end trigger, once set off; seat None is the Rival."""
    found = state["end_trigger"]
    return None if found is None else (found["seat"], found["reason"])


def place_on(state: dict, seat: int, cells: dict[tuple[int, int], int]) -> None:
    """Put doors straight into a block: {(col, row): card}."""
    for (col, row), door in cells.items():
        state["players"][seat]["block"][at(col, row)] = door
