"""The JSON Schemas Caravans publishes: its actions (trade offers included) and its
observations (with the log)."""

from __future__ import annotations

from engines.schema import (
    Schema,
    action,
    action_document,
    amount,
    array,
    boolean,
    described,
    event,
    integer,
    map_of,
    nullable,
    obj,
    observation_document,
    string,
)

from .bidding import SPECIAL_ITEMS
from .components import (
    CARDS,
    CITY_TYPES,
    COLOURS,
    FREE_ROUTES,
    MAP_CITIES,
    MAX_OFFERS_PER_PHASE,
    ROUTES,
)
from .flow import END_REASONS, PHASES
from .trade import TOKENS

MAX_SEATS = 4
ITEMS = (*(f"card:{card['id']}" for card in CARDS), *(f"rop:{c}" for c in COLOURS),
         *SPECIAL_ITEMS)

SEAT = integer(0, MAX_SEATS - 1)
CARD = integer(0, len(CARDS) - 1, "a card: components.cards[id]")
ROUTE = string(ROUTES, "a route id such as red:ivory-metal (components.maps)")
CITY = string((city for colour in COLOURS for city in MAP_CITIES[colour]),
              "a city id such as red.ivory")
COLOUR = string(COLOURS, "a map colour (its right of passage)")
ITEM = string(ITEMS, "card:<id> (a face-up card), rop:<colour> (a right of passage in the "
              "bank), shah, eyes or pirate_queen")
CARD_TYPE = string(CITY_TYPES)


def bundle(card_key: str, cards: Schema, optional: bool) -> Schema:
    """One side of a trade offer: `optional` for the action (absent keys give nothing), every
    key for the offer as the observation and the log show it."""
    fields = {
        "gold": amount() if optional else integer(0),
        card_key: cards,
        "passages": array(COLOUR, max_items=len(COLOURS), unique=True,
                          description="rights of passage, by map colour"),
        **{token: boolean() for token in TOKENS},
    }
    return obj(fields, optional=fields if optional else ())


GIVE_CARDS = array(CARD, max_items=len(CARDS), unique=True,
                   description="ids of cards in your hand")
TAKE_CARDS = array(CARD_TYPE, max_items=len(CARDS),
                   description="city types, repeated for several cards of one type; the other "
                   "player hands over their lowest-id cards of those types")

OFFER = action(
    "offer_trade",
    "actions: offer a trade to another player, who answers at once (accept_trade or "
    f"decline_trade); at most {MAX_OFFERS_PER_PHASE} offers per action phase. Any offer that "
    "fits this schema may be sent; legal_actions lists one simple offer per other player "
    "holding gold (your lowest-id card for 1 gold) while you hold cards and may still offer",
    {"to": described(SEAT, "the seat the offer is made to (not yourself)"),
     "give": described(bundle("cards", GIVE_CARDS, optional=True),
                       "what you give; absent keys give nothing"),
     "take": described(bundle("card_types", TAKE_CARDS, optional=True),
                       "what you ask for; absent keys ask nothing")},
    optional=("give", "take"))

ACTIONS = action_document("caravans action", [
    action("free_route", "setup: a route of your own map, free (two each, in seat order)",
           {"route": ROUTE}),
    action("open_auction", "bidding, your one opening chance: item is card:<id> (face up), "
           "rop:<colour> (in the bank, never your own right of passage), shah, eyes or "
           "pirate_queen, each auctioned once per turn; amount from 0 to your gold, only 0 once "
           "your camel is face down", {"item": ITEM, "amount": amount()}),
    action("decline_auction", "bidding: open no auction this turn"),
    action("bid", "auction: more than the current bid, at most your gold; never once your "
           "camel is face down (you then pass automatically)", {"amount": amount(1)}),
    action("pass", "auction: drop out of this auction for good"),
    action("name_shah", "after winning the Favor of the Shah: the seat who holds it now (any "
           "seat)", {"seat": SEAT}),
    action("build", "actions: pay 1 gold (0 with the Eyes on land / Pirate Queen at sea) and "
           "discard a card whose type matches either end", {"route": ROUTE, "card": CARD}),
    action("buy", "actions: pay degree(a) + degree(b) - 1 gold, no card; only when you hold "
           "no card matching either city", {"route": ROUTE}),
    action("destroy", "actions: another player's route, at twice its buy cost",
           {"route": ROUTE}),
    action("sell_passage", "actions: a right of passage you hold, to the bank, for the number "
           "of controlled cities on that map", {"colour": COLOUR}),
    OFFER,
    action("accept_trade", "answer to an offer made to you: take it"),
    action("decline_trade", "answer to an offer made to you: refuse it"),
    action("end_actions", "actions: end your action phase"),
])

SEATS = array(SEAT, max_items=MAX_SEATS)
CARDS_LIST = array(CARD)
GIVE = bundle("cards", CARDS_LIST, optional=False)
TAKE = bundle("card_types", array(CARD_TYPE), optional=False)


def per_seat(items: Schema, description: str | None = None) -> Schema:
    """An array with an item per seat."""
    return array(items, min_items=2, max_items=MAX_SEATS, description=description)


VIEW = obj({
    "colours": per_seat(COLOUR, "the maps in play; seat i plays colours[i]"),
    "phase": string(PHASES),
    "turn": integer(0),
    "final_turn": boolean("true in the turn the deck ran out"),
    "gold": per_seat(integer(0), "per seat"),
    "camel_up": per_seat(boolean(), "per seat; face down after paying gold this turn"),
    "owner": map_of(ROUTE, nullable(SEAT), "every route in play: its owner or null"),
    "control": map_of(CITY, SEAT, "every controlled city: its seat"),
    "rop": map_of(COLOUR, nullable(SEAT), "every right of passage in play: its holder or null "
                  "(in the bank)"),
    "shah": described(SEAT, "who holds the Favor of the Shah"),
    "eyes": nullable(SEAT, description="who holds the Eyes of Shamesh"),
    "pirate_queen": nullable(SEAT, description="who holds the Pirate Queen"),
    "face_up": described(CARDS_LIST, "the cards revealed for auction this turn"),
    "discard": CARDS_LIST,
    "bidding": obj({
        "start": described(SEAT, "the Shah holder, first to open"),
        "opener": integer(0, MAX_SEATS, "how many seats had their opening chance"),
        "auctioned": array(ITEM, description="items auctioned this turn"),
        "auction": nullable(obj({
            "item": ITEM,
            "high": described(SEAT, "the highest bidder"),
            "amount": integer(0, description="the highest bid"),
            "in": described(SEATS, "bidders still in"),
            "to_act": SEAT,
        }), description="the running auction"),
        "naming": nullable(SEAT, description="the winner of the Shah naming its holder"),
    }, description="this turn's bidding; absent before the first turn"),
    "actions": obj({
        "order": described(SEATS, "the order of play from the Shah holder"),
        "index": integer(0, MAX_SEATS, "position in order of the seat acting"),
        "offers": per_seat(integer(0, MAX_OFFERS_PER_PHASE),
                           "offers made this action phase, per seat"),
        "acted": boolean("whether anyone took an action this phase"),
        "offer": nullable(obj({"from": SEAT, "to": SEAT, "give": GIVE, "take": TAKE}),
                          description="an offer waiting for its answer"),
    }, description="the latest action phase; absent before the first one"),
    "setup_queue": array(SEAT, max_items=FREE_ROUTES * MAX_SEATS,
                         description="seats still to build a free route, in order"),
    "hand": nullable(CARDS_LIST, description="your hand, sorted; null for a spectator"),
    "hand_counts": per_seat(integer(0)),
    "known_cards": per_seat(CARDS_LIST, "per seat, the cards everyone saw them receive or "
                            "offer"),
    "deck_count": integer(0),
    "bank": obj({"passages": array(COLOUR), "eyes": boolean(), "pirate_queen": boolean()},
                description="what the bank holds"),
}, optional=("bidding", "actions"))


def _event(kind: str, fields: dict[str, Schema] | None = None, optional: tuple[str, ...] = (),
           description: str | None = None) -> Schema:
    return event(kind, fields, optional, description)


EVENTS = [
    _event("setup", {"gold": integer(0), "rop": map_of(COLOUR, SEAT), "shah": SEAT,
                     "deck": integer(0), "hand": CARDS_LIST}, ("hand",),
           "hand: only in that seat's own log"),
    _event("free_route", {"seat": SEAT, "route": ROUTE}),
    _event("turn", {"turn": integer(1), "shah": SEAT, "revealed": CARDS_LIST,
                    "deck": integer(0)}),
    _event("decline_auction", {"seat": SEAT}),
    _event("open_auction", {"seat": SEAT, "item": ITEM, "amount": integer(0)}),
    _event("bid", {"seat": SEAT, "amount": integer(1)}),
    _event("pass", {"seat": SEAT, "automatic": boolean()}, ("automatic",),
           "automatic (true) when the seat could not raise"),
    _event("won", {"seat": SEAT, "item": ITEM, "paid": integer(0), "camel_up": boolean()}),
    _event("name_shah", {"seat": SEAT, "holder": SEAT}),
    _event("discard_unsold", {"cards": CARDS_LIST}),
    _event("action_phase", {"order": SEATS}),
    _event("end_actions", {"seat": SEAT}),
    _event("build", {"seat": SEAT, "route": ROUTE, "card": CARD, "paid": integer(0, 1)}),
    _event("buy", {"seat": SEAT, "route": ROUTE, "paid": integer(0)}),
    _event("destroy", {"seat": SEAT, "route": ROUTE, "victim": SEAT, "paid": integer(0)}),
    _event("sell_passage", {"seat": SEAT, "colour": COLOUR, "gold": integer(0)}),
    _event("claim", {"seat": SEAT, "city": CITY, "gold": integer(0),
                     "removed": array(ROUTE, description="other players' routes removed")}),
    _event("control_lost", {"seat": SEAT, "city": CITY}),
    _event("offer", {"seat": SEAT, "to": SEAT, "give": GIVE, "take": TAKE}),
    _event("decline_trade", {"seat": SEAT}),
    _event("accept_trade", {"seat": SEAT, "cards_given": CARDS_LIST}),
]

OBSERVATION = observation_document("caravans observation", "caravans", MAX_SEATS, VIEW, ACTIONS,
                                   EVENTS, END_REASONS)
