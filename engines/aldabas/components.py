"""Aldabas's components as data: the 81 Doors (ten door types in three colours, some with
the No Solidad mark), the coins, the Dock and the player's block.

A card is an integer id; the tables below give its type, colour and whether it carries the
No Solidad icon. The ids are fixed, so `describe()` can publish the whole deck once.
"""

from __future__ import annotations

from dataclasses import dataclass

COLOURS = ("red", "blue", "yellow")
PROFESSIONS = ("soldier", "fisher", "noble", "clergy", "builder")
COINS_PER_PLAYER = 12
SOLO_SUPPLY = 15
STARTING_HAND = 5
RIVAL_HAND = 2
"""Doors in a player's starting hand, and in the Rival's before `rival_extra_hand`."""
MULTI_DOCK_COSTS = (0, 0, 1, 2, 3)
SOLO_DOCK_COSTS = (0, 1, 2, 3)
COLS, ROWS = 4, 3
"""The block: 4 x 3 spaces, the Vault in the bottom-left one."""


@dataclass(frozen=True)
class DoorType:
    """One of the ten kinds of Door (rulebook "The Doors")."""

    id: str
    profession: str
    influence: int
    aldaba: str
    text: str
    copies: int
    no_solidad: int
    has_power: bool = True


DOOR_TYPES: dict[str, DoorType] = {
    t.id: t
    for t in (
        DoorType("S1", "soldier", 1, "panther",
                 "Power: move a coin from your purse or vault onto a door of your block "
                 "(+1 influence there).", 3, 1),
        DoorType("S2", "soldier", 2, "lion",
                 "Power: move a coin from your purse into your vault.", 3, 1),
        DoorType("F1", "fisher", 1, "fish",
                 "Power: draw two doors, keep one, discard the other.", 3, 1),
        DoorType("F2", "fisher", 2, "ring",
                 "Power: steal two coins from one rival's purse, or one each from two.", 3, 3),
        DoorType("F3", "fisher", 3, "seahorse",
                 "Power: gain three coins from the supply.", 3, 1),
        DoorType("N2", "noble", 2, "lizard",
                 "Ongoing: each Soldier power moves one more coin (adds up).", 3, 1,
                 has_power=False),
        DoorType("N3", "noble", 3, "lizard",
                 "Ongoing: +3 points at final scoring.", 3, 1, has_power=False),
        DoorType("C1", "clergy", 1, "hand",
                 "Power: move a door of your choice from your hand to your vault.", 3, 1),
        DoorType("B2B", "builder", 2, "anchor",
                 "Power: buy one door from the Dock.", 2, 0),
        DoorType("B2D", "builder", 2, "key",
                 "Ongoing: buying costs one coin less (adds up, never below 0).", 1, 1,
                 has_power=False),
    )
}


def _build_cards() -> list[tuple[str, str, bool]]:
    """(type id, colour, no_solidad) for every card id, colour by colour, type by type."""
    cards: list[tuple[str, str, bool]] = []
    for colour in COLOURS:
        for door in DOOR_TYPES.values():
            for copy in range(door.copies):
                cards.append((door.id, colour, copy >= door.copies - door.no_solidad))
    return cards


CARDS = _build_cards()
CARD_TYPE: list[DoorType] = [DOOR_TYPES[t] for t, _, _ in CARDS]
CARD_COLOUR: list[str] = [c for _, c, _ in CARDS]
CARD_KIND: list[str] = [t for t, _, _ in CARDS]
"""Per card id, its door type's id (`kind`)."""
NO_SOLIDAD: list[bool] = [n for _, _, n in CARDS]
SOLO_DECK: list[int] = [i for i, n in enumerate(NO_SOLIDAD) if not n]
FULL_DECK: list[int] = list(range(len(CARDS)))


def influence(card: int) -> int:
    return CARD_TYPE[card].influence


def profession(card: int) -> str:
    return CARD_TYPE[card].profession


def kind(card: int) -> str:
    return CARD_TYPE[card].id


def card_table() -> list[dict[str, object]]:
    """Every card with its printed data, for `describe()`."""
    return [
        {
            "id": i,
            "type": t.id,
            "colour": CARD_COLOUR[i],
            "profession": t.profession,
            "influence": t.influence,
            "aldaba": t.aldaba,
            "no_solidad": NO_SOLIDAD[i],
        }
        for i, t in enumerate(CARD_TYPE)
    ]


def type_table() -> list[dict[str, object]]:
    """The ten door types with their counts, for `describe()`."""
    return [
        {
            "type": t.id,
            "profession": t.profession,
            "influence": t.influence,
            "aldaba": t.aldaba,
            "text": t.text,
            "copies_per_colour": t.copies,
            "no_solidad_copies_per_colour": t.no_solidad,
        }
        for t in DOOR_TYPES.values()
    ]
