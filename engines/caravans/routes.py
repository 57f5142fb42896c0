"""Routes on the maps: where a player may build, what it costs, and control of cities.

A player controls a city when they own more than half of its routes. The moment they
get there they take gold equal to the city's degree and every other player's route into
the city is removed; whoever thereby drops to half or less elsewhere loses control there.
"""

from __future__ import annotations

from engines.base import State, log_event
from engines.errors import IllegalAction

from .data import CITY_ROUTES, DEGREE, ROUTES, SEA


def check_route_in_play(state: State, route: str) -> None:
    if route not in state["owner"]:
        raise IllegalAction(f"route {route} is on a map that is not in this game")


def accessible_maps(state: State, seat: int) -> list[str]:
    """Your own map and every map whose right of passage you hold."""
    colours = state["colours"]
    return [c for c in colours if c == colours[seat] or state["rop"][c] == seat]


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
    state["owner"][route] = seat
    for city in ROUTES[route]["cities"]:
        if state["control"].get(city) != seat and has_majority(state, seat, city):
            claim_city(state, seat, city)


def claim_city(state: State, seat: int, city: str) -> None:
    """Control marker, gold equal to the degree, removal of the opponents' routes into it."""
    state["control"][city] = seat
    state["gold"][seat] += DEGREE[city]
    removed = [r for r in CITY_ROUTES[city] if state["owner"][r] not in (None, seat)]
    log_event(state, {"event": "claim", "seat": seat, "city": city, "gold": DEGREE[city],
                      "removed": removed})
    losers = {state["owner"][r] for r in removed}
    for r in removed:
        state["owner"][r] = None
    touched = {c for r in removed for c in ROUTES[r]["cities"]}
    for loser in sorted(losers):
        drop_lost_control(state, loser, touched)


def drop_lost_control(state: State, seat: int, cities: set[str]) -> None:
    """Remove `seat`'s control markers where they now own half of the routes or fewer."""
    for city in sorted(cities):
        if state["control"].get(city) == seat and not has_majority(state, seat, city):
            del state["control"][city]
            log_event(state, {"event": "control_lost", "seat": seat, "city": city})


def remove_route(state: State, route: str) -> None:
    """A destroyed route becomes unowned; its owner may lose control at either end."""
    loser = state["owner"][route]
    state["owner"][route] = None
    drop_lost_control(state, loser, set(ROUTES[route]["cities"]))
