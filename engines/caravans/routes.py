"""Routes on the maps: where a player may build, buy or destroy, what it costs, control of
cities, and selling a right of passage back.

A player controls a city when they own more than half of its routes. The moment they
get there they take gold equal to the city's degree and every other player's route into
the city is removed; whoever thereby drops to half or less elsewhere loses control there.
"""

from __future__ import annotations

from engines.base import log_event, replace_item
from engines.errors import IllegalAction
from engines.types import State

from .components import (
    BUY_COST,
    CARD_TYPE,
    CARDS,
    CITY_ROUTES,
    DEGREE,
    DESTROY_COST,
    MAP_CITIES,
    MAP_ROUTES,
    ROUTES,
    SEA,
)
from .hands import take_from_hand


def check_route_in_play(state: State, route: str) -> None:
    if route not in state["owner"]:
        raise IllegalAction(f"route {route} is on a map that is not in this game")


def accessible_maps(state: State, seat: int) -> list[str]:
    """Your own map and every map whose right of passage you hold."""
    colours: list[str] = state["colours"]
    own, passages = colours[seat], state["rop"]
    maps = []
    for colour in colours:  # a loop: cheaper than a comprehension over four colours
        if colour == own or passages[colour] == seat:
            maps.append(colour)
    return maps


def check_access(state: State, seat: int, route: str) -> None:
    colour = ROUTES[route]["map"]
    if colour not in accessible_maps(state, seat):
        raise IllegalAction(
            f"you may only work on your own map or a map whose right of passage you hold, "
            f"not the {colour} map"
        )


def build_gold(state: State, seat: int, route: str) -> int:
    """1 gold; 0 for a land route with the Eyes of Shamesh or a sea route with the Pirate Queen."""
    if ROUTES[route]["kind"] == SEA:
        return 0 if state["pirate_queen"] == seat else 1
    return 0 if state["eyes"] == seat else 1


def owned_count(state: State, seat: int, city: str) -> int:
    owner = state["owner"]
    return sum(1 for r in CITY_ROUTES[city] if owner[r] == seat)


def has_majority(state: State, seat: int, city: str) -> bool:
    return 2 * owned_count(state, seat, city) > DEGREE[city]


def place_route(state: State, seat: int, route: str) -> None:
    """Give `route` to `seat` and claim every city this gives them a majority of."""
    replace_item(state, "owner", route, seat)
    for city in ROUTES[route]["cities"]:
        if state["control"].get(city) != seat and has_majority(state, seat, city):
            claim_city(state, seat, city)


def claim_city(state: State, seat: int, city: str) -> None:
    """Control marker, gold equal to the degree, removal of the opponents' routes into it."""
    replace_item(state, "control", city, seat)
    state["gold"][seat] += DEGREE[city]
    removed = [r for r in CITY_ROUTES[city] if state["owner"][r] not in (None, seat)]
    log_event(state, "claim", {"seat": seat, "city": city, "gold": DEGREE[city],
                               "removed": removed})
    losers = {state["owner"][r] for r in removed}
    owner = dict(state["owner"])
    for r in removed:
        owner[r] = None
    state["owner"] = owner
    touched = {c for r in removed for c in ROUTES[r]["cities"]}
    for loser in sorted(losers):
        drop_lost_control(state, loser, touched)


def drop_lost_control(state: State, seat: int, cities: set[str]) -> None:
    """Remove `seat`'s control markers where they now own half of the routes or fewer."""
    for city in sorted(cities):
        if state["control"].get(city) == seat and not has_majority(state, seat, city):
            state["control"] = {c: s for c, s in state["control"].items() if c != city}
            log_event(state, "control_lost", {"seat": seat, "city": city})


def remove_route(state: State, route: str) -> None:
    """A destroyed route becomes unowned; its owner may lose control at either end."""
    loser = state["owner"][route]
    replace_item(state, "owner", route, None)
    drop_lost_control(state, loser, set(ROUTES[route]["cities"]))


# ----- the route actions --------------------------------------------------------------
def matching_cards(state: State, seat: int, route: str) -> list[int]:
    """The cards of `seat`'s hand whose type is one of the route's two cities."""
    types = ROUTES[route]["types"]
    return [card for card in state["hands"][seat] if CARD_TYPE[card] in types]


def open_routes(state: State, seat: int) -> list[str]:
    """Every unowned route `seat` may work on, map by map."""
    owner = state["owner"]
    return [r for c in accessible_maps(state, seat) for r in MAP_ROUTES[c] if owner[r] is None]


def cards_by_type(hand: list[int]) -> dict[str, list[int]]:
    """The cards of a hand by city type, lowest id first."""
    by_type: dict[str, list[int]] = {}
    for card in sorted(hand):
        by_type.setdefault(CARD_TYPE[card], []).append(card)
    return by_type


def reachable_route(state: State, seat: int, route: str) -> str:
    """`route`, checked to be in play and on a map `seat` may work on."""
    check_route_in_play(state, route)
    check_access(state, seat, route)
    return route


def open_route_for(state: State, seat: int, route: str) -> str:
    reachable_route(state, seat, route)
    if state["owner"][route] is not None:
        raise IllegalAction(f"route {route} already belongs to seat {state['owner'][route]}")
    return route


def pay(state: State, seat: int, cost: int, what: str) -> None:
    if state["gold"][seat] < cost:
        raise IllegalAction(f"{what} costs {cost} gold; you have {state['gold'][seat]}")
    state["gold"][seat] -= cost


def build(state: State, seat: int, route: str, card: int) -> None:
    """1 gold (Eyes: free land routes; Pirate Queen: free sea routes) and a matching card."""
    open_route_for(state, seat, route)
    if card not in state["hands"][seat]:
        raise IllegalAction(f"you do not hold card {card}")
    if card not in matching_cards(state, seat, route):
        raise IllegalAction(f"card {card} ({CARDS[card]['type']}) matches neither city of {route}")
    cost = build_gold(state, seat, route)
    pay(state, seat, cost, f"building {route}")
    take_from_hand(state, seat, card)
    state["discard"] = [*state["discard"], card]
    log_event(state, "build", {"seat": seat, "route": route, "card": card, "paid": cost})
    place_route(state, seat, route)


def buy(state: State, seat: int, route: str) -> None:
    """Only without a card matching either city: as much gold as there are routes out of both
    cities."""
    open_route_for(state, seat, route)
    if matching_cards(state, seat, route):
        raise IllegalAction(f"you hold a matching card for {route}: build it; buying outright is "
                            "for a player who does not have a card matching either city")
    cost = BUY_COST[route]
    pay(state, seat, cost, f"buying {route}")
    log_event(state, "buy", {"seat": seat, "route": route, "paid": cost})
    place_route(state, seat, route)


def destroy(state: State, seat: int, route: str) -> None:
    """Someone else's route, at double its buying cost; never your own."""
    reachable_route(state, seat, route)
    victim = state["owner"][route]
    if victim is None:
        raise IllegalAction(f"route {route} belongs to nobody: there is nothing to destroy")
    if victim == seat:
        raise IllegalAction("players may not destroy their own routes")
    cost = DESTROY_COST[route]
    pay(state, seat, cost, f"destroying {route}")
    log_event(state, "destroy", {"seat": seat, "route": route, "victim": victim, "paid": cost})
    remove_route(state, route)


def sell_passage(state: State, seat: int, colour: str) -> None:
    """Back to the bank for as much gold as the map has controlled cities."""
    if colour not in state["colours"]:
        raise IllegalAction(f"the {colour} map and its right of passage are not in this game")
    if state["rop"][colour] != seat:
        raise IllegalAction(f"you do not hold the {colour} right of passage")
    value = sum(1 for city in MAP_CITIES[colour] if city in state["control"])
    replace_item(state, "rop", colour, None)
    state["gold"][seat] += value
    log_event(state, "sell_passage", {"seat": seat, "colour": colour, "gold": value})
