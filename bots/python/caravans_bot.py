"""A greedy Caravans bot: it weighs every build, buy and destroy by the position it leads to.

A position is worth its points (controlled cities and type bonuses) less most of the best
rival's, its gold, its cards
and its progress towards a majority in the cities it can still reach. The bot acts while
an action improves that worth, then ends its actions. At auctions it opens at 0 on the item
it wants most and raises only while the price stays below the item's worth to it; it names
itself holder of the Shah, declines trades and offers none.

    python3 -m bots.python.caravans_bot --port 8001
"""

from __future__ import annotations

from engines.caravans.data import CARDS, DEGREE, MAP_CITIES, MAP_ROUTES, ROUTES, buy_cost
from engines.caravans.data import destroy_cost as destroy_cost_of
from engines.caravans.routes import owned_count, place_route, remove_route
from engines.caravans.scoring import breakdown

from .sdk import Choose, run_bot

POINT, RIVAL, GOLD, LAST_TURN_GOLD, CARD, PROGRESS = 10.0, 0.8, 0.6, 0.05, 0.5, 3.0
# What an auctioned item is worth in gold (cards: when they fit a reachable free route).
ITEM_WORTH = {"rop": 3.0, "card": 2.0, "eyes": 1.5, "pirate_queen": 1.5, "shah": 0.5}


class Position:
    """The public part of a state the rules helpers need, after a hypothetical action."""

    def __init__(self, observation: dict):
        self.seat = observation["seat"]
        self.colours = observation["colours"]
        self.state = {"owner": dict(observation["owner"]),
                      "control": dict(observation["control"]),
                      "gold": list(observation["gold"]), "rop": dict(observation["rop"]),
                      "eyes": observation["eyes"], "pirate_queen": observation["pirate_queen"],
                      "log": []}
        self.cards = len(observation["hand"])
        # Gold scores nothing: in the last turn it is only worth what it buys.
        self.gold_weight = LAST_TURN_GOLD if observation["final_turn"] else GOLD

    def maps(self) -> list[str]:
        """Maps the seat may work on: its own and those whose passage it holds."""
        own = self.colours[self.seat]
        return [c for c in self.colours if c == own or self.state["rop"][c] == self.seat]

    def worth(self) -> float:
        points = breakdown(self.state, self.seat)["total"]
        rivals = max(breakdown(self.state, s)["total"] for s in range(len(self.colours))
                     if s != self.seat)
        return (POINT * (points - RIVAL * rivals) + self.gold_weight * self.state["gold"][self.seat]
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
            gold[self.seat] -= {"build": self.build_cost(action.get("route", "")),
                                "buy": buy_cost(action.get("route", ""))}.get(kind, 0)
            self.cards -= kind == "build"
            place_route(self.state, self.seat, action["route"])
        elif kind == "destroy":
            gold[self.seat] -= destroy_cost_of(action["route"])
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
