"""A full state behind an observation: the other players' secret cards and the deck order
drawn.

Hidden (rules/caravans.md, "Setup"): each player's three starting cards, drawn in secret
from their own colour's pile, and the order of each colour's part of the deck (the piles
are stacked in seat order, so every position's colour is known). Every card that joins a
hand later does so in view of everyone (`known_cards`), so a player's secret cards are
starting cards of their colour. The log narrows them further: a `buy` shows the buyer held
no card of either city type of the route (a matching card forces a build, rules/caravans.md
"Routes and control"), and an `accept_trade` hands over the lowest-id cards of each type
asked (`trade.cards_for_types`), so no lower-id card of that type was left in that hand.
Within a colour the unseen cards are dealt at random: the secret ones among those the log
allows, uniformly, the rest onto that colour's deck positions, in a random order.
"""

from __future__ import annotations

from engines.base import clone
from engines.errors import InvalidState
from engines.rng import Rng
from engines.types import Event, JsonObject, State

from .components import CARDS, ROUTES, STARTING_CARDS
from .view import PUBLIC_KEYS

PRIVATE_EVENT_FIELDS = {"setup": ("hand",)}
"""The log fields only the seat concerned sees."""


def determinize(observation: JsonObject, rng: Rng) -> State:
    seat: int | None = observation["seat"]
    colours: list[str] = observation["colours"]
    known = [list(cards) for cards in observation["known_cards"]]
    hands: list[list[int]] = [[] for _ in colours]
    if seat is not None:
        hands[seat] = list(observation["hand"])
    unseen = unseen_by_colour(observation, colours)
    deck_colours = deck_position_colours(colours, observation["deck_count"])
    deck: list[int | None] = [None] * len(deck_colours)
    for owner, colour in enumerate(colours):
        pool = unseen[colour]
        if owner != seat:
            secret = secret_cards(observation, owner, pool, rng)
            hands[owner] = known[owner] + secret
            rng.shuffle(hands[owner])
            pool = [card for card in pool if card not in secret]
        positions = [i for i, c in enumerate(deck_colours) if c == colour]
        if len(pool) != len(positions):
            raise InvalidState(f"{len(pool)} unseen {colour} cards for {len(positions)} places")
        rng.shuffle(pool)
        for position, card in zip(positions, pool, strict=True):
            deck[position] = card
    return {
        "num_players": len(colours),
        "options": {},
        **clone({key: observation[key] for key in PUBLIC_KEYS if key in observation}),
        "hands": hands,
        "known": known,
        "deck": deck,
    }


def unseen_by_colour(observation: JsonObject, colours: list[str]) -> dict[str, list[int]]:
    """Per colour in play, the cards in no one's sight: not in the seat's hand, not known
    in any hand, not face up, not discarded."""
    seen = {*(observation["hand"] or []), *observation["face_up"], *observation["discard"],
            *(card for cards in observation["known_cards"] for card in cards)}
    return {colour: [card["id"] for card in CARDS
                     if card["colour"] == colour and card["id"] not in seen]
            for colour in colours}


def deck_position_colours(colours: list[str], deck_count: int) -> list[str]:
    """The colour of every card still in the deck, top first: the piles left after the
    starting hands, stacked in seat order, minus the cards revealed from the top."""
    stacked = [colour for colour in colours
               for _ in range(sum(card["colour"] == colour for card in CARDS) - STARTING_CARDS)]
    if not 0 <= deck_count <= len(stacked):
        raise InvalidState(f"a deck of {deck_count} cards, at most {len(stacked)}")
    return stacked[len(stacked) - deck_count:]


def secret_cards(observation: JsonObject, owner: int, pool: list[int], rng: Rng) -> list[int]:
    """`owner`'s secret cards: a uniform choice among the unseen cards of their colour the
    log allows them to hold."""
    count = observation["hand_counts"][owner] - len(observation["known_cards"][owner])
    ruled_out = excluded_cards(observation["log"], owner)
    allowed = [card for card in pool if card not in ruled_out]
    if len(allowed) < count:
        raise InvalidState(f"seat {owner} holds {count} secret cards, {len(allowed)} possible")
    rng.shuffle(allowed)
    return allowed[:count]


def excluded_cards(log: list[Event], owner: int) -> set[int]:
    """Cards the log shows `owner`'s secret cards can not be: every card of a city type of
    a route they bought, and each card of a type they handed over in a trade with a lower id
    than the highest one handed over."""
    excluded: set[int] = set()
    for event in log:
        if event["event"] == "buy" and event["seat"] == owner:
            types = ROUTES[event["route"]]["types"]
            excluded |= {card["id"] for card in CARDS if card["type"] in types}
        elif event["event"] == "accept_trade" and event["seat"] == owner:
            for given in event["cards_given"]:
                city_type = CARDS[given]["type"]
                excluded |= {card["id"] for card in CARDS
                             if card["type"] == city_type and card["id"] < given}
    return excluded
