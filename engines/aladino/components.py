"""Aladino's components as data: the 61-space cave, the 61 tokens, the player boards."""

from typing import NamedTuple, TypedDict

RADIUS = 4
KINDS = ("emerald", "ruby", "sapphire", "pearl")
VALUES = (1, 2, 3, 4, 5)
CHARACTERS = ("carpet", "titi", "genie", "sorcerer", "princess")
# Axial directions (q, r), indexed 0..5; each is a neighbour of every inner space.
DIRECTIONS = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
DIRECTION_NAMES = ("E", "NE", "NW", "W", "SW", "SE")


class Token(NamedTuple):
    id: int
    kind: str | None  # None for a Genie
    value: int  # 0 for a Genie
    character: str | None  # one of CHARACTERS, or None for a plain treasure


def _cells() -> tuple[tuple[int, int], ...]:
    spaces = [
        (q, r)
        for r in range(-RADIUS, RADIUS + 1)
        for q in range(-RADIUS, RADIUS + 1)
        if max(abs(q), abs(r), abs(q + r)) <= RADIUS
    ]
    return tuple(spaces)


CELLS = _cells()
CELL_INDEX = {cell: i for i, cell in enumerate(CELLS)}
# NEIGHBOUR[cell][direction] is the next space's index, or -1 at the wall.
NEIGHBOUR = tuple(
    tuple(CELL_INDEX.get((q + dq, r + dr), -1) for dq, dr in DIRECTIONS) for q, r in CELLS
)


def _ray(cell: int, direction: int) -> tuple[int, ...]:
    spaces = []
    while (cell := NEIGHBOUR[cell][direction]) >= 0:
        spaces.append(cell)
    return tuple(spaces)


# RAY[cell][direction]: the spaces from `cell` to the wall in that direction, nearest first.
RAY = tuple(tuple(_ray(cell, d) for d in range(len(DIRECTIONS))) for cell in range(len(CELLS)))

# Per kind and value: (plain tokens, character on the extra token or None), rules/aladino.md.
_MIX = {1: (2, "carpet"), 2: (2, "titi"), 3: (2, "princess"), 4: (3, None), 5: (1, "sorcerer")}


def _tokens() -> tuple[Token, ...]:
    tokens: list[Token] = []
    for kind in KINDS:
        for value in VALUES:
            plain, character = _MIX[value]
            for _ in range(plain):
                tokens.append(Token(len(tokens), kind, value, None))
            if character:
                tokens.append(Token(len(tokens), kind, value, character))
    for _ in range(4):
        tokens.append(Token(len(tokens), None, 0, "genie"))
    return tuple(tokens)


TOKENS = _tokens()
ALADDIN = len(TOKENS)  # the 61st token: marks the starting space, then leaves the cave
WIN_SCORE = 50
DIE_SIDES = 4


def back(token: Token) -> str:
    """What a face-down token shows: its kind, or a lamp for a Genie."""
    return token.kind or "lamp"


class TokenJson(TypedDict):
    id: int
    kind: str | None
    value: int
    character: str | None


def token_json(token: Token) -> TokenJson:
    return {"id": token.id, "kind": token.kind, "value": token.value, "character": token.character}
