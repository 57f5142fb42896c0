"""Caravans' fixed action index space (engines.action_space) and the bounds it rests on.

Every action of the schema, with bids and opening amounts of 0 to `MAX_GOLD` (the schema
bounds them only by MAX_AMOUNT; nobody ever holds more gold, see `max_gold`) and, of the
open `offer_trade`, the offers `legal_actions` lists: one card for one gold, to any seat.
Most of the space is auction openings: an item times an amount.
"""

from __future__ import annotations

from math import ceil

from engines.action_space import ActionSpace, schema_actions
from engines.types import Action, JsonObject

from .components import (
    CARDS,
    CITY_TYPES,
    COLOURS,
    DEGREE,
    FREE_ROUTES,
    MAP_ROUTES,
    MAX_OFFERS_PER_PHASE,
    ROUTES,
    STARTING_CARDS,
    STARTING_GOLD,
)
from .schemas import ACTIONS, MAX_SEATS


def turns(num_players: int) -> int:
    """The most turns: the deck holds each colour's cards but the starting hands, and each
    turn reveals one card per player; the turn that empties it is the last."""
    colours = COLOURS[:num_players]
    deck = sum(1 for card in CARDS if card["colour"] in colours) - STARTING_CARDS * num_players
    return ceil(deck / num_players)


def routes_in_play(num_players: int) -> list[str]:
    return [route for colour in COLOURS[:num_players] for route in MAP_ROUTES[colour]]


def max_gold(num_players: int) -> int:
    """More gold than all players together ever hold when an amount is chosen (in a
    bidding phase, so after at most `turns - 1` action phases).

    Gold enters the game only when a city is claimed (its degree) or a right of passage is
    sold back (at most one per city of its map); bids, routes and destroys pay the bank,
    trades move gold between players. A claim comes with placing a route of one of its two
    cities: a free route or a build (one card each, and cards never come back from the
    discard pile) claims at most degree(a) + degree(b); a buy costs degree(a) + degree(b) - 1
    and claims at most that plus one, and only by claiming both ends. In a player's own
    action phase only their routes are placed and only others' removed, so they never lose
    a city there and claim each at most once: at most half the cities in play by buys
    claiming both ends, per player and action phase. Each right of passage is sold at most
    once per action phase (only an auction takes it out of the bank)."""
    n = num_players
    cities = len(CITY_TYPES) * n
    best_pair = max(DEGREE[a] + DEGREE[b] for a, b in
                    (ROUTES[route]["cities"] for route in routes_in_play(n)))
    cards_before_last_bid = STARTING_CARDS * n + n * (turns(n) - 1)
    placements = FREE_ROUTES * n + cards_before_last_bid
    per_action_phase = n * (cities // 2) + n * len(CITY_TYPES)
    return STARTING_GOLD * n + placements * best_pair + (turns(n) - 1) * per_action_phase


MAX_GOLD = max(max_gold(n) for n in range(2, MAX_SEATS + 1))


def listed_offers() -> list[Action]:
    """The offers `legal_actions` lists (engines/caravans/trade.py `canonical_offers`)."""
    return [{"type": "offer_trade", "to": seat, "give": {"cards": [card["id"]]},
             "take": {"gold": 1}} for seat in range(MAX_SEATS) for card in CARDS]


SPACE = ActionSpace(schema_actions(
    ACTIONS,
    values={"open_auction": {"amount": range(MAX_GOLD + 1)},
            "bid": {"amount": range(1, MAX_GOLD + 1)}},
    listed={"offer_trade": listed_offers()},
))


def max_decisions(num_players: int, options: JsonObject) -> int:
    """More decisions than any game takes: the free routes; per turn, an opening decision
    per player, per auction (one per player at most) a bid per gold of the highest amount
    and a pass per player, naming the Shah's holder; per player's action phase a buy per
    route (their routes only grow in it) and a destroy per route (others' only shrink),
    a sale per right of passage, the offers with their answers and end_actions; and a
    build per card."""
    n = num_players
    routes = len(routes_in_play(n))
    bidding = n + n * (max_gold(n) + n) + 1
    actions = n * (2 * routes + n + 2 * MAX_OFFERS_PER_PHASE + 1)
    cards = sum(1 for card in CARDS if card["colour"] in COLOURS[:n])
    return FREE_ROUTES * n + turns(n) * (bidding + actions) + cards
