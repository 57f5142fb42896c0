"""The JSON Schemas Aldabas publishes: its actions and its observations (with the log)."""

from __future__ import annotations

from engines.schema import (
    Schema,
    action,
    action_document,
    amount,
    any_of,
    array,
    const,
    described,
    end_record,
    event,
    integer,
    nullable,
    obj,
    observation_document,
    pair,
    string,
)

from .components import CARDS, COLS, MULTI_DOCK_COSTS, ROWS, SOLO_DOCK_COSTS
from .flow import PHASES
from .table import END_REASONS, RIVAL

MAX_SEATS = 4
MAX_COST = max(MULTI_DOCK_COSTS + SOLO_DOCK_COSTS)
SLOTS = max(len(MULTI_DOCK_COSTS), len(SOLO_DOCK_COSTS))

SEAT = integer(0, MAX_SEATS - 1)
CARD = integer(0, len(CARDS) - 1, "a door: components.cards[id]")
SPACE = pair(integer(0, COLS - 1), integer(0, ROWS - 1),
             "[col, row] of a block, col 0-3 left to right, row 0-2 bottom to top; the vault "
             "is [0, 0]")
SLOT = integer(0, SLOTS - 1, "a Dock slot (0-4; solo 0-3)")
FROM_VAULT = integer(0, MAX_COST, "how many of the coins come from your vault, the rest from "
                     "your purse")

ACTIONS = action_document("aldabas action", [
    action("setup_vault", "setup: put a door from your hand secretly into your vault",
           {"card": CARD}),
    action("setup_discard", "setup: discard a door from your hand for one coin", {"card": CARD}),
    action("setup_done", "setup: keep the rest of your hand"),
    action("take_coins", "action: take two coins from the supply"),
    action("buy", "action: buy the door in a Dock slot for its cost minus your discount; "
           "every possible split of the payment between vault and purse is listed",
           {"slot": SLOT, "from_vault": FROM_VAULT}),
    action("place", "action: place a door of your hand in your block, then its Powers",
           {"card": CARD, "space": SPACE}),
    action("withdraw", "free, not an action, at any point of your own turn while your vault "
           "holds coins: move that many coins from your vault to your purse",
           {"coins": amount(1, "how many coins")}),
    action("power", "after a placement: activate one of the available Powers (the new door, "
           "the door directly left, the door directly below)", {"space": SPACE}),
    action("end_powers", "after a placement: skip every remaining Power"),
    action("soldier_coin", "Soldier (Influence 1): move one coin onto a door of your block; "
           "repeated once per Noble (Influence 2) in your block, while you have coins",
           {"source": string(("purse", "vault"), "where the coin comes from"),
            "space": SPACE}),
    action("keep", "Fisher (Influence 1): keep one of the two drawn doors, discard the other",
           {"card": CARD}),
    action("steal", "Fisher (Influence 2): one coin from each named rival's purse (name a "
           "seat twice to take two from it)",
           {"from": pair(SEAT, SEAT, "two rivals' seats, or one seat twice")}),
    action("to_vault", "Clergy: move a door from your hand to your vault", {"card": CARD}),
    action("builder_buy", "Builder (anchor): buy one door from the Dock, paid like buy",
           {"slot": SLOT, "from_vault": FROM_VAULT}),
    action("discard", "end of turn: discard down to the hand limit of seven", {"card": CARD}),
])

CARDS_LIST = array(CARD)
BY = any_of(SEAT, const(RIVAL), description="a seat, or rival (solo)")
BLOCK = array(obj({"space": SPACE, "card": CARD,
                   "coins": integer(0, description="coins on the door, +1 influence each")}),
              max_items=COLS * ROWS - 1,
              description="the doors of a block (the vault has none)")
POWERS = [
    obj({"kind": const("S1"), "coins_left": integer(1, description="coins still to move")}),
    obj({"kind": const("F1"), "drawn": array(CARD, min_items=2, max_items=2,
                                             description="the two drawn doors")},
        description="the one who drew them"),
    obj({"kind": const("F1"), "drawn_count": const(2)}, description="everyone else"),
    obj({"kind": const("F2")}),
    obj({"kind": const("C1")}),
    obj({"kind": const("B2B")}),
]

VIEW = {
    **obj({
        "mode": string(("multi", "solo")),
        "phase": string(PHASES, "which decision the game waits for"),
        "active": nullable(SEAT, description="the seat whose turn it is; null once over"),
        "turn": integer(0, description="turns played, the Rival's included"),
        "actions_left": integer(0, 2, "actions left this turn"),
        "pending_powers": array(SPACE, max_items=3,
                                description="spaces whose Powers may still be activated"),
        "power": nullable({"oneOf": POWERS}, description="the Power being resolved"),
        "supply": integer(0, description="coins in the general supply"),
        "box_used": integer(0, description="coins taken from the box once the supply ran out"),
        "deck_count": integer(0),
        "discard": described(CARDS_LIST, "the discard pile, face up, oldest first"),
        "dock": array(obj({"slot": SLOT, "cost": integer(0, MAX_COST),
                           "card": nullable(CARD, description="null: empty")}),
                      min_items=len(SOLO_DOCK_COSTS), max_items=SLOTS,
                      description="every Dock slot with its printed cost"),
        "end_trigger": nullable(end_record(END_REASONS, MAX_SEATS),
                                description="what set off the end (seat null: the Rival); "
                                "the final round is being played, and this is the end "
                                "record once it is over"),
        "players": array(obj({
            "seat": SEAT,
            "purse": integer(0),
            "hand_size": integer(0),
            "vault_card_count": integer(0),
            "block": BLOCK,
        }), min_items=1, max_items=MAX_SEATS, description="the public side of every seat"),
        "you": nullable(obj({
            "hand": CARDS_LIST,
            "vault_cards": CARDS_LIST,
            "vault_coins": integer(0),
        }), description="your secrets; null for a spectator"),
        "rival": obj({
            "goals": array(CARD, min_items=3, max_items=3),
            "hand": described(CARDS_LIST, "in order: the leftmost is built next"),
            "vault_coins": integer(0),
            "vault_card_count": integer(0),
            "block": BLOCK,
        }, description="solo only: the automated Rival"),
    }, optional=["rival"]),
    "if": {"properties": {"mode": {"const": "solo"}}},
    "then": {"required": ["rival"]},
    "else": {"not": {"required": ["rival"]}},
}


def _event(kind: str, fields: dict[str, Schema] | None = None, private: tuple[str, ...] = ()
           ) -> Schema:
    description = f"{', '.join(private)}: only in the mover's own log" if private else None
    return event(kind, fields, private, description)


EVENTS = [
    _event("setup", {"mode": string(("multi", "solo")), "supply": integer(0),
                     "hand": CARDS_LIST}, private=("hand",)),
    _event("rival_setup", {"goals": CARDS_LIST, "hand": CARDS_LIST, "dock": array(CARD)}),
    _event("setup_vault", {"seat": SEAT, "card": CARD}, private=("card",)),
    _event("setup_discard", {"seat": SEAT, "card": CARD}),
    _event("dock_dealt", {"dock": array(nullable(CARD))}),
    _event("turn", {"seat": BY, "turn": integer(1)}),
    _event("take_coins", {"seat": SEAT, "coins": integer(0)}),
    _event("buy", {"seat": SEAT, "slot": SLOT, "card": CARD, "paid": integer(0, MAX_COST),
                   "from_vault": FROM_VAULT}, private=("from_vault",)),
    _event("place", {"seat": SEAT, "card": CARD, "space": SPACE}),
    _event("withdraw", {"seat": SEAT, "coins": integer(1)}),
    _event("power", {"seat": SEAT, "space": SPACE, "card": CARD}),
    _event("skip_powers", {"seat": SEAT, "skipped": array(SPACE)}),
    _event("coin_on_door", {"seat": SEAT, "space": SPACE,
                            "source": string(("purse", "vault"))}, private=("source",)),
    _event("to_vault", {"seat": SEAT, "coins": integer(0)}),
    _event("draw", {"seat": SEAT, "count": integer(0, 1), "cards": CARDS_LIST},
           private=("cards",)),
    _event("fish", {"seat": SEAT, "discarded": CARD, "kept": CARD}, private=("kept",)),
    _event("steal", {"seat": SEAT, "from": array(SEAT, max_items=2,
                                                 description="a seat per coin taken")}),
    _event("gain", {"seat": SEAT, "coins": integer(0)}),
    _event("door_to_vault", {"seat": SEAT, "card": CARD}, private=("card",)),
    _event("discard", {"seat": SEAT, "card": CARD}),
    _event("end_triggered", end_record(END_REASONS, MAX_SEATS)["properties"]),
    _event("rival_claim", {"slot": SLOT, "card": CARD}),
    _event("rival_build", {"card": CARD, "space": integer(1, COLS * ROWS - 1,
                                                          "block index row * 4 + col")}),
    _event("rival_power", {"card": CARD}),
    _event("rival_advance", {"discarded": nullable(CARD)}),
]

OBSERVATION = observation_document("aldabas observation", "aldabas", MAX_SEATS, VIEW, ACTIONS,
                                   EVENTS, END_REASONS)
