"""Every decision a seat can take, step by step (engines.caravans.flow.step): its legal
actions and its handler. After each action the game moves on to the next phase once the
current one is complete (flow.advance)."""

from __future__ import annotations

from typing import Literal, TypedDict

from engines.base import log_event
from engines.errors import IllegalAction
from engines.phases import Move, Phases
from engines.rng import Rng
from engines.types import State

from . import bidding, flow, routes, trade
from .components import (
    BUY_COST,
    CARD_TYPE,
    CHEAPEST_BUY,
    CHEAPEST_DESTROY,
    DESTROY_COST,
    MAP_ROUTES,
    ROUTES,
)
from .routes import accessible_maps, build_gold, cards_by_type, open_routes
from .trade import OfferAction


class NoFields(TypedDict):
    type: Literal["decline_auction", "pass", "accept_trade", "decline_trade", "end_actions"]


class RouteAction(TypedDict):
    """`free_route`, `buy` and `destroy`: a route."""

    type: Literal["free_route", "buy", "destroy"]
    route: str


class BuildAction(TypedDict):
    type: Literal["build"]
    route: str
    card: int


class OpenAuctionAction(TypedDict):
    type: Literal["open_auction"]
    item: str
    amount: int


class BidAction(TypedDict):
    type: Literal["bid"]
    amount: int


class NameShahAction(TypedDict):
    type: Literal["name_shah"]
    seat: int


class SellPassageAction(TypedDict):
    type: Literal["sell_passage"]
    colour: str


# ----- setup -----------------------------------------------------------------------------
def legal_free_routes(state: State) -> list[RouteAction]:
    seat = state["setup_queue"][0]
    own = MAP_ROUTES[state["colours"][seat]]
    return [{"type": "free_route", "route": r} for r in own if state["owner"][r] is None]


def do_free_route(state: State, action: RouteAction, rng: Rng) -> None:
    """Two free routes each, on your own map, in seat order (rules/caravans.md, Setup)."""
    seat = state["setup_queue"][0]
    route = action["route"]
    routes.check_route_in_play(state, route)
    if ROUTES[route]["map"] != state["colours"][seat]:
        raise IllegalAction("the two free routes are built on your own map")
    if state["owner"][route] is not None:
        raise IllegalAction(f"route {route} is already built")
    state["setup_queue"] = state["setup_queue"][1:]
    log_event(state, "free_route", {"seat": seat, "route": route})
    routes.place_route(state, seat, route)


# ----- bidding ---------------------------------------------------------------------------
def legal_opens(state: State) -> list[OpenAuctionAction]:
    seat = bidding.opener_seat(state)
    amounts = range(bidding.max_bid(state, seat) + 1)
    return [
        {"type": "open_auction", "item": item, "amount": amount}
        for item in bidding.open_items(state, seat)
        for amount in amounts
    ]


def do_open_auction(state: State, action: OpenAuctionAction, rng: Rng) -> None:
    bidding.open_auction(state, action["item"], action["amount"])


def legal_decline_auction(state: State) -> list[NoFields]:
    return [{"type": "decline_auction"}]


def do_decline_auction(state: State, action: NoFields, rng: Rng) -> None:
    bidding.decline(state)


def legal_bids(state: State) -> list[BidAction]:
    auction = state["bidding"]["auction"]
    raises = range(auction["amount"] + 1, bidding.max_bid(state, auction["to_act"]) + 1)
    return [{"type": "bid", "amount": a} for a in raises]


def do_bid(state: State, action: BidAction, rng: Rng) -> None:
    bidding.raise_bid(state, action["amount"])


def legal_pass(state: State) -> list[NoFields]:
    return [{"type": "pass"}]


def do_pass(state: State, action: NoFields, rng: Rng) -> None:
    bidding.pass_bid(state)


def legal_names(state: State) -> list[NameShahAction]:
    return [{"type": "name_shah", "seat": s} for s in range(state["num_players"])]


def do_name_shah(state: State, action: NameShahAction, rng: Rng) -> None:
    bidding.name_shah(state, action["seat"])


# ----- the action phase --------------------------------------------------------------------
def legal_builds(state: State) -> list[BuildAction]:
    """Per open route a card of the hand matches, if its gold is there: each such card."""
    seat = flow.acting_seat(state)
    gold = state["gold"][seat]
    by_type = cards_by_type(state["hands"][seat])
    actions: list[BuildAction] = []
    for route in open_routes(state, seat):
        first, second = ROUTES[route]["types"]
        affordable = gold > 0 or build_gold(state, seat, route) == 0  # it costs 0 or 1
        if (first in by_type or second in by_type) and affordable:
            for card in sorted(by_type.get(first, []) + by_type.get(second, [])):
                actions.append({"type": "build", "route": route, "card": card})
    return actions


def do_build(state: State, action: BuildAction, rng: Rng) -> None:
    routes.build(state, flow.acting_seat(state), action["route"], action["card"])
    state["actions"]["acted"] = True


def legal_buys(state: State) -> list[RouteAction]:
    seat = flow.acting_seat(state)
    gold = state["gold"][seat]
    if gold < CHEAPEST_BUY:  # no route to look at
        return []
    held = {CARD_TYPE[card] for card in state["hands"][seat]}
    return [{"type": "buy", "route": r} for r in open_routes(state, seat)
            if BUY_COST[r] <= gold and held.isdisjoint(ROUTES[r]["types"])]


def do_buy(state: State, action: RouteAction, rng: Rng) -> None:
    routes.buy(state, flow.acting_seat(state), action["route"])
    state["actions"]["acted"] = True


def legal_destroys(state: State) -> list[RouteAction]:
    seat = flow.acting_seat(state)
    gold, owner = state["gold"][seat], state["owner"]
    if gold < CHEAPEST_DESTROY:  # no route to look at
        return []
    return [
        {"type": "destroy", "route": r}
        for c in accessible_maps(state, seat) for r in MAP_ROUTES[c]
        if owner[r] not in (None, seat) and DESTROY_COST[r] <= gold
    ]


def do_destroy(state: State, action: RouteAction, rng: Rng) -> None:
    routes.destroy(state, flow.acting_seat(state), action["route"])
    state["actions"]["acted"] = True


def legal_sales(state: State) -> list[SellPassageAction]:
    seat = flow.acting_seat(state)
    return [{"type": "sell_passage", "colour": c} for c in state["colours"]
            if state["rop"][c] == seat]


def do_sell_passage(state: State, action: SellPassageAction, rng: Rng) -> None:
    routes.sell_passage(state, flow.acting_seat(state), action["colour"])
    state["actions"]["acted"] = True


def legal_offers(state: State) -> list[OfferAction]:
    return trade.canonical_offers(state, flow.acting_seat(state))


def do_offer_trade(state: State, action: OfferAction, rng: Rng) -> None:
    trade.apply_offer(state, flow.acting_seat(state), action)


def legal_end_actions(state: State) -> list[NoFields]:
    return [{"type": "end_actions"}]


def do_end_actions(state: State, action: NoFields, rng: Rng) -> None:
    log_event(state, "end_actions", {"seat": flow.acting_seat(state)})
    state["actions"]["index"] += 1


# ----- the answer to an offer ----------------------------------------------------------------
def legal_accept(state: State) -> list[NoFields]:
    return [{"type": "accept_trade"}] if trade.can_accept(state) else []


def do_accept_trade(state: State, action: NoFields, rng: Rng) -> None:
    trade.accept(state)


def legal_decline_trade(state: State) -> list[NoFields]:
    return [{"type": "decline_trade"}]


def do_decline_trade(state: State, action: NoFields, rng: Rng) -> None:
    trade.decline(state)


PHASES = Phases({
    flow.SETUP: {"free_route": Move(legal_free_routes, do_free_route)},
    flow.OPENING: {"open_auction": Move(legal_opens, do_open_auction),
                   "decline_auction": Move(legal_decline_auction, do_decline_auction)},
    flow.AUCTION: {"bid": Move(legal_bids, do_bid), "pass": Move(legal_pass, do_pass)},
    flow.NAMING: {"name_shah": Move(legal_names, do_name_shah)},
    flow.ACTIONS: {
        "build": Move(legal_builds, do_build),
        "buy": Move(legal_buys, do_buy),
        "destroy": Move(legal_destroys, do_destroy),
        "sell_passage": Move(legal_sales, do_sell_passage),
        "offer_trade": Move(legal_offers, do_offer_trade),
        "end_actions": Move(legal_end_actions, do_end_actions),
    },
    flow.ANSWER: {"accept_trade": Move(legal_accept, do_accept_trade),
                  "decline_trade": Move(legal_decline_trade, do_decline_trade)},
}, flow.step)
