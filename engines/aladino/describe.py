"""`describe()` for Aladino: everything a bot author needs, as data."""

from __future__ import annotations

from typing import Any

from . import scoring
from .components import (
    CELLS,
    CHARACTERS,
    DIE_SIDES,
    DIRECTION_NAMES,
    DIRECTIONS,
    KINDS,
    RADIUS,
    TOKENS,
    VALUES,
    WIN_SCORE,
    token_json,
)


def description() -> dict[str, Any]:
    """Also `points`: the numbers of `scoring`, for bots that score boards themselves."""
    return {
        "name": "aladino",
        "title": "Aladino y la cueva de las maravillas",
        "players": {"min": 2, "max": 4},
        "options": {},
        "components": {
            "board": {
                "coordinates": "axial (q, r); a space exists when max(|q|, |r|, |q+r|) <= "
                f"{RADIUS}; spaces are listed in the order of `cave` in observations",
                "spaces": [list(c) for c in CELLS],
                "directions": [
                    {"index": i, "name": DIRECTION_NAMES[i], "dq": dq, "dr": dr}
                    for i, (dq, dr) in enumerate(DIRECTIONS)
                ],
            },
            "tokens": [token_json(t) for t in TOKENS],
            "kinds": list(KINDS),
            "values": list(VALUES),
            "characters": list(CHARACTERS),
            "die": {"sides": DIE_SIDES},
            "player_boards": {
                "rows": list(KINDS),
                "columns": list(VALUES),
                "favourite": "seat i's favourite treasure is kinds[i]",
            },
        },
        "scoring": {
            "token": "its value; Evil Sorcerer " f"{scoring.SORCERER_POINTS}; Genie 0",
            "favourite": "+1 per token of the favourite kind, +2 for a favourite Princess; "
            "a Genie is never favourite",
            "princess_carpet": f"+{scoring.PRINCESS_CARPET_BONUS} per Princess whose row holds "
            "a Magic Carpet",
            "row": f"+{scoring.ROW_BONUS} per row with all 5 squares filled",
            "column": f"+{scoring.COLUMN_BONUS} per column with all 4 squares filled",
            "trio": f"+{scoring.TRIO_BONUS} per three tokens stacked on one square (a Genie "
            "counts as a token of its square)",
        },
        "points": {
            "sorcerer": scoring.SORCERER_POINTS,
            "favourite": scoring.FAVOURITE_POINTS,
            "favourite_princess": scoring.FAVOURITE_PRINCESS_POINTS,
            "princess_carpet": scoring.PRINCESS_CARPET_BONUS,
            "row": scoring.ROW_BONUS,
            "column": scoring.COLUMN_BONUS,
            "trio": scoring.TRIO_BONUS,
        },
        "end": [
            "the player about to move (or rolling again for Titi) has no legal direction",
            "a player fills all 20 squares of their board",
            f"a player's score reaches {WIN_SCORE} or more",
        ],
    }
