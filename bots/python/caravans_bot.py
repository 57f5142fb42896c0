"""A greedy Caravans bot: it weighs every build, buy and destroy by the position it leads to.

A position is worth its points (controlled cities and type bonuses) less most of the best
rival's, its gold, its cards and its progress towards a majority in the cities it can
still reach. The bot acts while an action improves that worth, then ends its actions. At
auctions it opens at 0 on the item it wants most and raises only while the price stays
below the item's worth to it; it names itself holder of the Shah, declines trades and
offers none.

It reads its observation and the maps of `describe()` (what GET /games/caravans
serves), and plays positions forward with its own copy of the rules of cities.

    python3 -m bots.python.caravans_bot --port 8001
"""

from __future__ import annotations

from typing import Any

import engines

from .sdk import Choose, run_bot

POINT, RIVAL, GOLD, LAST_TURN_GOLD, CARD, PROGRESS = 10.0, 0.8, 0.6, 0.05, 0.5, 3.0
# What an auctioned item is worth in gold (cards: when they fit a reachable free route).
ITEM_WORTH = {"rop": 3.0, "card": 2.0, "eyes": 1.5, "pirate_queen": 1.5, "shah": 0.5}

# The maps and cards (GET /games/caravans): every route with its cities, types, kind and
# costs, every city with its degree.
COMPONENTS = engines.get("caravans").describe()["components"]
MAPS: dict[str, dict[str, Any]] = COMPONENTS["maps"]
CARDS: list[dict[str, Any]] = COMPONENTS["cards"]
ROUTES: dict[str, dict[str, Any]] = {r: route for m in MAPS.values()
                                     for r, route in m["routes"].items()}
DEGREE: dict[str, int] = {city: c["degree"] for m in MAPS.values()
                          for city, c in m["cities"].items()}
MAP_CITIES = {colour: list(m["cities"]) for colour, m in MAPS.items()}
MAP_ROUTES = {colour: list(m["routes"]) for colour, m in MAPS.items()}
CITY_ROUTES = {city: [r for r, route in ROUTES.items() if city in route["cities"]]
               for city in DEGREE}
TYPE_BONUS: int = COMPONENTS["type_bonus"]


# ----- the rules of routes and cities (rules/caravans.md), on the public part of a state ----
def owned_count(state: dict, seat: int, city: str) -> int:
    return sum(1 for r in CITY_ROUTES[city] if state["owner"][r] == seat)


def has_majority(state: dict, seat: int, city: str) -> bool:
    return 2 * owned_count(state, seat, city) > DEGREE[city]


def place_route(state: dict, seat: int, route: str) -> None:
    """The route is `seat`'s; so is every city this gives them a majority of."""
    state["owner"][route] = seat
    for city in ROUTES[route]["cities"]:
        if state["control"].get(city) != seat and has_majority(state, seat, city):
            claim_city(state, seat, city)


def claim_city(state: dict, seat: int, city: str) -> None:
    """Control, gold equal to the degree, the other players' routes into it removed."""
    state["control"][city] = seat
    state["gold"][seat] += DEGREE[city]
    removed = [r for r in CITY_ROUTES[city] if state["owner"][r] not in (None, seat)]
    losers = {state["owner"][r] for r in removed}
    for r in removed:
        state["owner"][r] = None
    touched = {c for r in removed for c in ROUTES[r]["cities"]}
    for loser in sorted(losers):
        drop_lost_control(state, loser, touched)


def drop_lost_control(state: dict, seat: int, cities: set[str]) -> None:
    for city in sorted(cities):
        if state["control"].get(city) == seat and not has_majority(state, seat, city):
            del state["control"][city]


def remove_route(state: dict, route: str) -> None:
    loser = state["owner"][route]
    state["owner"][route] = None
    drop_lost_control(state, loser, set(ROUTES[route]["cities"]))


def points(state: dict, seat: int) -> int:
    """1 per controlled city, TYPE_BONUS per extra map of a city type."""
    types = [city.split(".")[1] for city, holder in state["control"].items() if holder == seat]
    return len(types) + sum(TYPE_BONUS * (types.count(t) - 1) for t in set(types))


class Position:
    """The public part of a state the rules helpers need, after a hypothetical action."""

    def __init__(self, observation: dict):
        self.seat = observation["seat"]
        self.colours = observation["colours"]
        self.state = {"owner": dict(observation["owner"]),
                      "control": dict(observation["control"]),
                      "gold": list(observation["gold"]), "rop": dict(observation["rop"]),
                      "eyes": observation["eyes"], "pirate_queen": observation["pirate_queen"]}
        self.cards = len(observation["hand"])
        # Gold scores nothing: in the last turn it is only worth what it buys.
        self.gold_weight = LAST_TURN_GOLD if observation["final_turn"] else GOLD

    def maps(self) -> list[str]:
        """Maps the seat may work on: its own and those whose passage it holds."""
        own = self.colours[self.seat]
        return [c for c in self.colours if c == own or self.state["rop"][c] == self.seat]

    def worth(self) -> float:
        own = points(self.state, self.seat)
        rivals = max(points(self.state, s) for s in range(len(self.colours)) if s != self.seat)
        return (POINT * (own - RIVAL * rivals) + self.gold_weight * self.state["gold"][self.seat]
                + CARD * self.cards + PROGRESS * self.progress())

    def progress(self) -> float:
        """Sum over reachable cities held by nobody else of the share of a majority owned."""
        total = 0.0
        for colour in self.maps():
            for city in MAP_CITIES[colour]:
                if self.state["control"].get(city) is None:
                    needed = DEGREE[city] // 2 + 1
                    total += min(owned_count(self.state, self.seat, city), needed) / needed
        return total

    def after(self, action: dict) -> Position:
        """A copy with `action` played (build, buy, destroy, sell_passage or free_route)."""
        nxt = Position.__new__(Position)
        nxt.seat, nxt.colours, nxt.cards = self.seat, self.colours, self.cards
        nxt.gold_weight = self.gold_weight
        nxt.state = {k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list)
                         else v) for k, v in self.state.items()}
        nxt.apply(action)
        return nxt

    def apply(self, action: dict) -> None:
        kind, gold = action["type"], self.state["gold"]
        if kind in ("build", "buy", "free_route"):
            route = action["route"]
            gold[self.seat] -= (self.build_cost(route) if kind == "build"
                                else ROUTES[route]["buy_cost"] if kind == "buy" else 0)
            self.cards -= kind == "build"
            place_route(self.state, self.seat, action["route"])
        elif kind == "destroy":
            gold[self.seat] -= ROUTES[action["route"]]["destroy_cost"]
            remove_route(self.state, action["route"])
        elif kind == "sell_passage":
            colour = action["colour"]
            gold[self.seat] += sum(city in self.state["control"] for city in MAP_CITIES[colour])
            self.state["rop"][colour] = None

    def build_cost(self, route: str) -> int:
        token = "pirate_queen" if ROUTES[route]["kind"] == "sea" else "eyes"
        return 0 if self.state[token] == self.seat else 1


def choose_routes(observation: dict, legal_actions: list[dict]) -> dict:
    """Setup and action phase: the action leading to the best position; else stop."""
    here = Position(observation)
    scored = [(here.after(a).worth(), a) for a in legal_actions
              if a["type"] in ("free_route", "build", "buy", "destroy", "sell_passage")]
    best_worth, best = max(scored, key=lambda pair: pair[0], default=(None, None))
    stop = next((a for a in legal_actions if a["type"] == "end_actions"), None)
    if best is None or (stop is not None and best_worth <= here.worth()):
        return stop or legal_actions[0]
    return best


def item_worth(position: Position, item: str) -> float:
    """The gold the bot would pay for an auctioned item."""
    kind, _, name = item.partition(":")
    if kind != "card":
        return ITEM_WORTH[kind]
    card_type = CARDS[int(name)]["type"]
    fits = any(position.state["owner"][r] is None and card_type in ROUTES[r]["types"]
               for colour in position.maps() for r in MAP_ROUTES[colour])
    return ITEM_WORTH["card"] if fits else 0.0


def choose_bidding(observation: dict, legal_actions: list[dict]) -> dict:
    kind = legal_actions[0]["type"]
    if kind == "name_shah":
        return {"type": "name_shah", "seat": observation["seat"]}
    here = Position(observation)
    if kind in ("bid", "pass"):
        auction = observation["bidding"]["auction"]
        worth = item_worth(here, auction["item"])
        raises = [a for a in legal_actions if a["type"] == "bid" and a["amount"] < worth]
        return raises[0] if raises else {"type": "pass"}
    opens = [(item_worth(here, a["item"]), a) for a in legal_actions
             if a["type"] == "open_auction" and a["amount"] == 0]
    worth, wanted = max(opens, key=lambda pair: pair[0], default=(0.0, None))
    if wanted is None or worth <= 0:
        return {"type": "decline_auction"}
    return wanted


def choose_greedy(observation: dict, legal_actions: list[dict]) -> dict:
    types = {a["type"] for a in legal_actions}
    if "decline_trade" in types:
        return {"type": "decline_trade"}
    if types & {"name_shah", "bid", "pass", "open_auction", "decline_auction"}:
        return choose_bidding(observation, legal_actions)
    return choose_routes(observation, legal_actions)


def make_choose(seed: int | None = None) -> Choose:
    """The greedy chooser (deterministic: `seed` is accepted for a uniform bot interface)."""
    return choose_greedy


if __name__ == "__main__":
    raise SystemExit(run_bot(make_choose, "a greedy Caravans bot"))
