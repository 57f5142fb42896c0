"""The action phase: build, buy, destroy, sell a right of passage, trade, end your actions.

Clockwise from the Shah holder each player takes any number of actions, then ends. The
game ends after the action phase of the turn in which the deck ran out, or after an
action phase in which nobody took an action (a declined offer is not an action).
"""

from __future__ import annotations

from engines.base import Action, State, log_event
from engines.errors import IllegalAction

from . import trade
from .data import CARDS, MAP_CITIES, MAP_ROUTES, ROUTES, buy_cost, destroy_cost
from .hands import take_from_hand
from .routes import (
    accessible_maps,
    build_gold,
    check_access,
    check_route_in_play,
    place_route,
    remove_route,
)

ACTION_TYPES = ("build", "buy", "destroy", "sell_passage", "offer_trade", "end_actions")


def start_action_phase(state: State) -> None:
    n = state["num_players"]
    state["phase"] = "actions"
    state["actions"] = {
        "order": [(state["shah"] + k) % n for k in range(n)], "index": 0,
        "offers": [0] * n, "acted": False, "offer": None,
    }
    log_event(state, {"event": "action_phase", "order": list(state["actions"]["order"])})


def acting_seat(state: State) -> int:
    phase = state["actions"]
    return phase["order"][phase["index"]]


def actions_current_seat(state: State) -> int:
    offer = state["actions"]["offer"]
    return offer["to"] if offer is not None else acting_seat(state)


def actions_finished(state: State) -> bool:
    return state["actions"]["index"] >= state["num_players"]


def actions_legal_actions(state: State) -> list[Action]:
    if state["actions"]["offer"] is not None:
        return trade.reply_legal_actions(state)
    seat = acting_seat(state)
    matches = open_route_matches(state, seat)
    return (build_actions(state, seat, matches) + buy_actions(state, seat, matches)
            + destroy_actions(state, seat) + sell_actions(state, seat)
            + trade.canonical_offers(state, seat) + [{"type": "end_actions"}])


def open_route_matches(state: State, seat: int) -> dict[str, list[int]]:
    """Every unowned route `seat` may work on, with the matching cards of their hand."""
    owner = state["owner"]
    return {
        r: matching_cards(state, seat, r)
        for c in accessible_maps(state, seat) for r in MAP_ROUTES[c] if owner[r] is None
    }


def build_actions(state: State, seat: int, matches: dict[str, list[int]]) -> list[Action]:
    gold = state["gold"][seat]
    return [
        {"type": "build", "route": r, "card": card}
        for r, cards in matches.items() if build_gold(state, seat, r) <= gold
        for card in sorted(cards)
    ]


def buy_actions(state: State, seat: int, matches: dict[str, list[int]]) -> list[Action]:
    gold = state["gold"][seat]
    return [{"type": "buy", "route": r} for r, cards in matches.items()
            if buy_cost(r) <= gold and not cards]


def matching_cards(state: State, seat: int, route: str) -> list[int]:
    """The cards of `seat`'s hand whose type is one of the route's two cities."""
    return [card for card in state["hands"][seat] if CARDS[card]["type"] in ROUTES[route]["types"]]


def destroy_actions(state: State, seat: int) -> list[Action]:
    gold, owner = state["gold"][seat], state["owner"]
    return [
        {"type": "destroy", "route": r}
        for c in accessible_maps(state, seat) for r in MAP_ROUTES[c]
        if owner[r] not in (None, seat) and destroy_cost(r) <= gold
    ]


def sell_actions(state: State, seat: int) -> list[Action]:
    return [{"type": "sell_passage", "colour": c} for c in state["colours"]
            if state["rop"][c] == seat]


def apply_actions(state: State, action: Action) -> None:
    kind = action["type"]
    if state["actions"]["offer"] is not None:
        trade.apply_reply(state, action)
        return
    if kind not in ACTION_TYPES:
        raise IllegalAction(f'"{kind}" is not possible in the action phase; '
                            f'expected one of {", ".join(ACTION_TYPES)}')
    seat = acting_seat(state)
    if kind == "end_actions":
        log_event(state, {"event": "end_actions", "seat": seat})
        state["actions"]["index"] += 1
        return
    if kind == "offer_trade":
        trade.apply_offer(state, seat, action)
        return
    {"build": build, "buy": buy, "destroy": destroy, "sell_passage": sell_passage}[kind](
        state, seat, action)
    state["actions"]["acted"] = True


def reachable_route(state: State, seat: int, action: Action) -> str:
    """The action's route, in play and on a map `seat` may work on."""
    route = action["route"]
    check_route_in_play(state, route)
    check_access(state, seat, route)
    return route


def open_route_for(state: State, seat: int, action: Action) -> str:
    route = reachable_route(state, seat, action)
    if state["owner"][route] is not None:
        raise IllegalAction(f"route {route} already belongs to seat {state['owner'][route]}")
    return route


def pay(state: State, seat: int, cost: int, what: str) -> None:
    if state["gold"][seat] < cost:
        raise IllegalAction(f"{what} costs {cost} gold; you have {state['gold'][seat]}")
    state["gold"][seat] -= cost


def build(state: State, seat: int, action: Action) -> None:
    """1 gold (Eyes: free land routes; Pirate Queen: free sea routes) and a matching card."""
    route = open_route_for(state, seat, action)
    card = action["card"]
    if card not in state["hands"][seat]:
        raise IllegalAction(f"you do not hold card {card}")
    if card not in matching_cards(state, seat, route):
        raise IllegalAction(f"card {card} ({CARDS[card]['type']}) matches neither city of {route}")
    cost = build_gold(state, seat, route)
    pay(state, seat, cost, f"building {route}")
    take_from_hand(state, seat, card)
    state["discard"].append(card)
    log_event(state, {"event": "build", "seat": seat, "route": route, "card": card, "paid": cost})
    place_route(state, seat, route)


def buy(state: State, seat: int, action: Action) -> None:
    """Only without a card matching either city: as much gold as there are routes out of both
    cities."""
    route = open_route_for(state, seat, action)
    if matching_cards(state, seat, route):
        raise IllegalAction(f"you hold a matching card for {route}: build it; buying outright is "
                            "for a player who does not have a card matching either city")
    cost = buy_cost(route)
    pay(state, seat, cost, f"buying {route}")
    log_event(state, {"event": "buy", "seat": seat, "route": route, "paid": cost})
    place_route(state, seat, route)


def destroy(state: State, seat: int, action: Action) -> None:
    """Someone else's route, at double its buying cost; never your own."""
    route = reachable_route(state, seat, action)
    victim = state["owner"][route]
    if victim is None:
        raise IllegalAction(f"route {route} belongs to nobody: there is nothing to destroy")
    if victim == seat:
        raise IllegalAction("players may not destroy their own routes")
    cost = destroy_cost(route)
    pay(state, seat, cost, f"destroying {route}")
    log_event(state, {"event": "destroy", "seat": seat, "route": route, "victim": victim,
                      "paid": cost})
    remove_route(state, route)


def sell_passage(state: State, seat: int, action: Action) -> None:
    """Back to the bank for as much gold as the map has controlled cities."""
    colour = action["colour"]
    if colour not in state["colours"]:
        raise IllegalAction(f"the {colour} map and its right of passage are not in this game")
    if state["rop"][colour] != seat:
        raise IllegalAction(f"you do not hold the {colour} right of passage")
    value = sum(1 for city in MAP_CITIES[colour] if city in state["control"])
    state["rop"][colour] = None
    state["gold"][seat] += value
    log_event(state, {"event": "sell_passage", "seat": seat, "colour": colour, "gold": value})
