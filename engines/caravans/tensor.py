"""Caravans's observation tensor (engines.tensor). A card is written as its kind, one of
24 (colour x city type: cards of one kind play alike); seats are relative; gold is a count
up to `action_space.MAX_GOLD`:

the number of players (4), phase (4), the seat to move (4), turn, final turn, deck; per
seat (4): gold, camel, hand size, the cards everyone saw it get (24); your hand (24), the
face-up cards (24), the discard pile (24); every route's owner (38 x 4); every city's
controller (24 x 4); every right of passage's holder or the bank (4 x 5); the holders of
the Favor of the Shah (4), the Eyes and the Pirate Queen (2 x 5); the bidding: who started,
how many opened, the items auctioned (47), the auction's item (47), high bidder, amount,
bidders in and the seat to act, the seat naming the Shah's holder; the action phase: the
seat acting, offers made per seat, whether anyone acted, and the offer waiting: from, to,
and each side's gold, cards (24; asked: 6 city types), passages (4), tokens (3); the free
routes still to build.
"""

from __future__ import annotations

from typing import Any

from engines.tensor import Writer, relative
from engines.types import JsonObject

from .action_space import MAX_GOLD, turns
from .components import (
    CARDS,
    CITY_TYPES,
    COLOURS,
    FREE_ROUTES,
    MAP_CITIES,
    MAX_OFFERS_PER_PHASE,
    ROUTES,
)
from .flow import PHASES
from .schemas import ITEMS, MAX_SEATS
from .trade import TOKENS

KIND = [COLOURS.index(card["colour"]) * len(CITY_TYPES) + CITY_TYPES.index(card["type"])
        for card in CARDS]
"""Each card's kind: its colour and city type."""
KINDS = len(COLOURS) * len(CITY_TYPES)
COPIES = max(KIND.count(kind) for kind in range(KINDS))
ROUTE_IDS = list(ROUTES)
CITIES = [city for colour in COLOURS for city in MAP_CITIES[colour]]
MOST_TURNS = turns(MAX_SEATS)


class _Seats:
    """Seats of one observation, relative to its observer."""

    def __init__(self, observation: JsonObject):
        self.count = len(observation["colours"])
        self.me = observation["seat"]

    def rel(self, seat: int | None) -> int | None:
        return relative(seat, self.me, self.count)

    def of(self, seat: int) -> int:
        return (seat - (self.me or 0)) % self.count

    def absolute(self, rel: int) -> int | None:
        return (rel + (self.me or 0)) % self.count if rel < self.count else None


def write(w: Writer, observation: JsonObject) -> None:
    seats = _Seats(observation)
    w.one_hot(seats.count - 1, MAX_SEATS)
    w.one_hot(PHASES.index(observation["phase"]), len(PHASES))
    w.one_hot(seats.rel(observation["to_move"]), MAX_SEATS)
    w.number(observation["turn"], MOST_TURNS)
    w.flag(observation["final_turn"])
    w.number(observation["deck_count"], len(CARDS))
    for rel in range(MAX_SEATS):
        seat = seats.absolute(rel)
        w.number(0 if seat is None else observation["gold"][seat], MAX_GOLD)
        w.flag(seat is not None and observation["camel_up"][seat])
        w.number(0 if seat is None else observation["hand_counts"][seat], len(CARDS))
        _cards(w, [] if seat is None else observation["known_cards"][seat])
    for cards in (observation["hand"] or [], observation["face_up"], observation["discard"]):
        _cards(w, cards)
    owner, control, rop = observation["owner"], observation["control"], observation["rop"]
    for route in ROUTE_IDS:
        w.one_hot(seats.rel(owner.get(route)), MAX_SEATS)
    for city in CITIES:
        w.one_hot(seats.rel(control.get(city)), MAX_SEATS)
    for colour in COLOURS:
        _holder(w, seats, rop.get(colour), colour in rop)
    w.one_hot(seats.rel(observation["shah"]), MAX_SEATS)
    for token in ("eyes", "pirate_queen"):
        _holder(w, seats, observation[token], True)
    _bidding(w, seats, observation.get("bidding"))
    _actions(w, seats, observation.get("actions"))
    w.number(len(observation["setup_queue"]), FREE_ROUTES * MAX_SEATS)


def _cards(w: Writer, cards: list[int]) -> None:
    w.counts((KIND[card] for card in cards), KINDS, COPIES)


def _holder(w: Writer, seats: _Seats, seat: int | None, in_play: bool) -> None:
    """A seat, or the bank (a thing in play that nobody holds)."""
    w.one_hot(seats.rel(seat), MAX_SEATS)
    w.flag(in_play and seat is None)


def _bidding(w: Writer, seats: _Seats, bidding: JsonObject | None) -> None:
    w.one_hot(seats.rel(bidding["start"]) if bidding else None, MAX_SEATS)
    w.number(bidding["opener"] if bidding else 0, MAX_SEATS)
    w.flags((ITEMS.index(item) for item in bidding["auctioned"]) if bidding else (),
            len(ITEMS))
    auction = bidding["auction"] if bidding else None
    w.one_hot(ITEMS.index(auction["item"]) if auction else None, len(ITEMS))
    w.one_hot(seats.rel(auction["high"]) if auction else None, MAX_SEATS)
    w.number(auction["amount"] if auction else 0, MAX_GOLD)
    w.flags((seats.of(seat) for seat in auction["in"]) if auction else (), MAX_SEATS)
    w.one_hot(seats.rel(auction["to_act"]) if auction else None, MAX_SEATS)
    w.one_hot(seats.rel(bidding["naming"]) if bidding else None, MAX_SEATS)


def _actions(w: Writer, seats: _Seats, actions: JsonObject | None) -> None:
    w.one_hot(seats.rel(actions["order"][actions["index"]])
              if actions and actions["index"] < seats.count else None, MAX_SEATS)
    for rel in range(MAX_SEATS):
        seat = seats.absolute(rel)
        offers = actions["offers"][seat] if actions and seat is not None else 0
        w.number(offers, MAX_OFFERS_PER_PHASE)
    w.flag(bool(actions and actions["acted"]))
    offer = actions["offer"] if actions else None
    w.one_hot(seats.rel(offer["from"]) if offer else None, MAX_SEATS)
    w.one_hot(seats.rel(offer["to"]) if offer else None, MAX_SEATS)
    _bundle(w, offer["give"] if offer else None, "cards")
    _bundle(w, offer["take"] if offer else None, "card_types")


def _bundle(w: Writer, bundle: dict[str, Any] | None, card_key: str) -> None:
    w.number(bundle["gold"] if bundle else 0, MAX_GOLD)
    if card_key == "cards":
        _cards(w, bundle["cards"] if bundle else [])
    else:
        w.counts((CITY_TYPES.index(t) for t in bundle["card_types"]) if bundle else (),
                 len(CITY_TYPES), len(CARDS))
    w.flags((COLOURS.index(c) for c in bundle["passages"]) if bundle else (), len(COLOURS))
    w.flags((i for i, token in enumerate(TOKENS) if bundle and bundle[token]), len(TOKENS))
