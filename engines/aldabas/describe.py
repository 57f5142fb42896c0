"""The published description of Aldabas: options, components, scoring and actions."""

from __future__ import annotations

from typing import Any

from .components import (
    COINS_PER_PLAYER,
    COLOURS,
    COLS,
    MULTI_DOCK_COSTS,
    ROWS,
    SOLO_DOCK_COSTS,
    SOLO_SUPPLY,
    card_table,
    type_table,
)
from .flow import HAND_LIMIT
from .scoring import SOLO_BANDS

MAX_EXTRA = 10
OPTIONS = {
    "mode": {"type": "string", "enum": ["multi", "solo"], "default": "multi",
             "doc": "multi: 2-4 players; solo: Aldabas Solidad, exactly 1 player against "
                    "the automated Rival"},
    "rival_extra_hand": {"type": "integer", "minimum": 0, "maximum": MAX_EXTRA, "default": 0,
                         "doc": "solo only: extra doors in the Rival's starting hand (harder)"},
    "extra_supply": {"type": "integer", "minimum": 0, "maximum": MAX_EXTRA, "default": 0,
                     "doc": "solo only: extra coins in the general supply (easier)"},
}

SCORING = [
    "1. 2 points per coin in your vault; those coins then join your purse.",
    "2. Per Profession (soldier, fisher, noble, clergy, builder), influence = printed influence "
    "of its doors in block and vault + coins on its block doors. At least 1 influence is needed "
    "to place. Everyone tied for most scores the primary condition and nobody scores second; "
    "otherwise everyone tied for second-most scores the secondary condition. Solo: only first.",
    "soldier: 1st 3 per Noble in block, 2nd 1 per Noble in block",
    "fisher: 1st 1 per printed influence in hand, 2nd 1 per 2",
    "noble: 1st 1 per coin in purse (after step 1), 2nd 1 per 2",
    "clergy: 1st 1 per 3 influence in block (coins on doors included), 2nd 1 per 5",
    "builder: 1st 1 per non-Builder in block, 2nd 1 per 2",
    "+3 points per Noble (Influence 3) in your block.",
    "3. 3 points to everyone tied for most total influence.",
    "Winner: most points; tie: most coins in purse; still tied: shared.",
]

SOLO = {
    "rival": "automated inside the engine (not a seat); it plays first, then after each of "
             "your turns; its hand (in order), goals, block and vault coins are public, its "
             "vault door is not",
    "rival_turn": [
        "1. claim: the Dock door of highest value = influence - slot cost + 2 if its aldaba "
        "matches a goal's; a tie goes to the more expensive slot; it joins the right end of "
        "the Rival's hand and the Dock refills",
        "2. build: only with 3+ doors in hand, the leftmost goes to the next empty space "
        "[1,0] [2,0] [3,0] [0,1] .. [3,1] [0,2] .. [3,2], colour ignored; then the powers of "
        "the new door, the door left of it and the door below it, in that order",
        "3. advance: the door in the cost-0 slot is discarded and the Dock refills",
    ],
    "rival_powers": {
        "S1": "1 + (N2 in its block) coins from the supply onto the new door",
        "S2": "1 + (N2 in its block) coins from the supply into its vault",
        "F1": "draw two, keep the more valuable (cost 0; a tie keeps the first drawn), "
              "discard the other",
        "C1": "a full claim step",
        "F3, N3, B2B": "no effect",
    },
    "end": "the turn in progress (yours or the Rival's) is finished, then scoring",
}


def description() -> dict[str, Any]:
    cards = card_table()
    return {
        "name": "aldabas",
        "title": "Aldabas: Doors of Cartagena",
        "players": {"multi": [2, 4], "solo": [1, 1]},
        "options": OPTIONS,
        "components": {
            "colours": list(COLOURS),
            "door_types": type_table(),
            "cards": cards,
            "deck_size": {"multi": len(cards),
                          "solo": sum(1 for c in cards if not c["no_solidad"])},
            "coins": {"supply_per_player": COINS_PER_PLAYER, "solo_supply": SOLO_SUPPLY,
                      "after_supply": "unlimited coins from the box"},
            "dock_costs": {"multi": MULTI_DOCK_COSTS, "solo": SOLO_DOCK_COSTS},
            "block": {"cols": COLS, "rows": ROWS, "vault": [0, 0],
                      "space": "[col, row], col 0 left to 3 right, row 0 bottom to 2 top"},
            "hand_limit": HAND_LIMIT,
            "solo_bands": [{"from": low, "result": text} for low, text in SOLO_BANDS],
        },
        "scoring": SCORING,
        "solo": SOLO,
        "turn": "two actions per turn (the same twice allowed); a placement opens its Powers, "
                "activated one at a time in any order or skipped; then the hand limit. Moving "
                "vault coins to the purse (withdraw) is free at any point of the turn.",
        "end": "the supply runs out, a block is filled, or the Dock can not be refilled: the "
               "turn finishes, then every other player has one more turn (solo: score at once)",
    }
