"""Component data of Caravans of Ahldarahd: colours, maps, routes and commodity cards.

The maps and the card lists are the project's canonical ones (rules/caravans.md); the
rulebook does not publish them. A city is named `<colour>.<type>`, a route
`<colour>:<type>-<type>`, a card is an integer id whose colour and type `CARDS` gives.
"""

from __future__ import annotations

from typing import Any, TypedDict

COLOURS = ("red", "blue", "green", "yellow")
CITY_TYPES = ("ivory", "metal", "gems", "spices", "silk", "incense")
LAND, SEA = "land", "sea"

_ROUTE_TABLE = {
    "red": "ivory-metal L, ivory-gems L, ivory-incense S, metal-gems L, metal-spices S, "
           "gems-silk L, spices-silk S, spices-incense L, silk-incense L",
    "blue": "ivory-metal S, ivory-spices L, ivory-silk L, ivory-incense L, metal-gems S, "
            "metal-silk L, gems-spices L, gems-incense S, spices-silk S, silk-incense L",
    "green": "ivory-gems S, ivory-spices L, metal-gems L, metal-incense S, metal-silk L, "
             "gems-spices L, spices-silk S, silk-incense L",
    "yellow": "ivory-metal L, ivory-gems L, ivory-silk S, ivory-incense L, metal-gems L, "
              "metal-spices L, gems-silk S, gems-incense L, spices-silk L, spices-incense S, "
              "silk-incense L",
}

_CARD_TABLE = {
    "red": "ivory 2, metal 2, gems 2, spices 2, silk 1, incense 1",
    "blue": "metal 2, gems 2, spices 2, silk 2, incense 1, ivory 1",
    "green": "gems 2, spices 2, silk 2, incense 2, ivory 1, metal 1",
    "yellow": "spices 2, silk 2, incense 2, ivory 2, metal 1, gems 1",
}

STARTING_GOLD = 5
STARTING_CARDS = 3
FREE_ROUTES = 2
MAX_OFFERS_PER_PHASE = 3
TYPE_BONUS = 3


class Route(TypedDict):
    map: str
    cities: list[str]
    types: list[str]
    kind: str


class Card(TypedDict):
    id: int
    colour: str
    type: str


def _parse_routes() -> dict[str, Route]:
    routes: dict[str, Route] = {}
    for colour, text in _ROUTE_TABLE.items():
        for entry in text.split(", "):
            pair, kind = entry.split()
            a, b = pair.split("-")
            routes[f"{colour}:{a}-{b}"] = {
                "map": colour,
                "cities": [f"{colour}.{a}", f"{colour}.{b}"],
                "types": [a, b],
                "kind": LAND if kind == "L" else SEA,
            }
    return routes


def _parse_cards() -> list[Card]:
    cards: list[Card] = []
    for colour in COLOURS:
        for entry in _CARD_TABLE[colour].split(", "):
            city_type, count = entry.split()
            for _ in range(int(count)):
                cards.append({"id": len(cards), "colour": colour, "type": city_type})
    return cards


ROUTES = _parse_routes()
CARDS = _parse_cards()
CITY_ROUTES: dict[str, list[str]] = {}
for _route_id, _route in ROUTES.items():
    for _city in _route["cities"]:
        CITY_ROUTES.setdefault(_city, []).append(_route_id)
DEGREE: dict[str, int] = {city: len(ids) for city, ids in CITY_ROUTES.items()}
MAP_ROUTES: dict[str, list[str]] = {
    colour: [r for r, route in ROUTES.items() if route["map"] == colour] for colour in COLOURS
}
CARD_TYPE: list[str] = [card["type"] for card in CARDS]
"""Per card id, its city type."""
MAP_CITIES: dict[str, list[str]] = {
    colour: [f"{colour}.{t}" for t in CITY_TYPES] for colour in COLOURS
}


def buy_cost(route_id: str) -> int:
    """Routes touching either end, this one counted once."""
    a, b = ROUTES[route_id]["cities"]
    return DEGREE[a] + DEGREE[b] - 1


def destroy_cost(route_id: str) -> int:
    return 2 * buy_cost(route_id)


BUY_COST = {route: buy_cost(route) for route in ROUTES}
DESTROY_COST = {route: destroy_cost(route) for route in ROUTES}
"""`buy_cost` and `destroy_cost` per route, computed once."""
CHEAPEST_BUY, CHEAPEST_DESTROY = min(BUY_COST.values()), min(DESTROY_COST.values())


def components() -> dict[str, Any]:
    """The published component data: every colour's map and cards."""
    return {
        "colours": list(COLOURS),
        "city_types": list(CITY_TYPES),
        "maps": {
            colour: {
                "cities": {city: {"degree": DEGREE[city]} for city in MAP_CITIES[colour]},
                "routes": {
                    r: {**ROUTES[r], "buy_cost": buy_cost(r), "destroy_cost": destroy_cost(r)}
                    for r in MAP_ROUTES[colour]
                },
            }
            for colour in COLOURS
        },
        "cards": list(CARDS),
        "starting_gold": STARTING_GOLD,
        "starting_cards": STARTING_CARDS,
        "free_routes": FREE_ROUTES,
        "offers_per_action_phase": MAX_OFFERS_PER_PHASE,
        "type_bonus": TYPE_BONUS,
    }
