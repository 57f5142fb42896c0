"""A greedy Aldabas bot: build the block fast with high-influence doors that set off many
powers, and keep coins in the vault (two points each at the end).

Per decision: place the door (and space) worth the most, else buy the best door the purse
affords, else take two coins; use every power; keep, steal, vault and discard by printed
influence. It never withdraws vault coins. Works in multiplayer and in solo (Solidad).

It reads its observation and the doors' printed data of `describe()` (what
GET /games/aldabas serves).

    python3 -m bots.python.aldabas_bot --port 8001
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import engines

from .sdk import Choose, run_bot

# Every door's printed data (GET /games/aldabas): type, profession, influence...
CARDS: list[dict[str, Any]] = engines.get("aldabas").describe()["components"]["cards"]

# What setting off a door's power is worth, in points (roughly: what it gains).
POWER_WORTH = {"S1": 1.5, "S2": 2.0, "F1": 1.5, "F2": 2.0, "F3": 3.0, "C1": 1.0, "B2B": 1.5}
ONGOING_WORTH = {"N3": 3.0, "N2": 0.5, "B2D": 1.0}
BUY_THRESHOLD = 1.0


def door_worth(card: int) -> float:
    """A door's printed influence plus what its power or ongoing ability brings."""
    kind = CARDS[card]["type"]
    return CARDS[card]["influence"] + POWER_WORTH.get(kind, 0.0) + ONGOING_WORTH.get(kind, 0.0)


def block_cards(observation: dict) -> dict[tuple[int, int], int]:
    """The seat's own block: space -> card."""
    own = observation["players"][observation["seat"]]["block"]
    return {tuple(door["space"]): door["card"] for door in own}


def placement_worth(block: dict[tuple[int, int], int], action: dict) -> float:
    """The new door's worth plus the powers of the doors directly left of and below it."""
    col, row = action["space"]
    neighbours = [block.get((col - 1, row)), block.get((col, row - 1))]
    return door_worth(action["card"]) + sum(
        POWER_WORTH.get(CARDS[card]["type"], 0.0) for card in neighbours if card is not None)


def purchase_gain(observation: dict, buy: dict) -> float:
    """The worth of the Dock door a purchase takes, less its price."""
    slot = next(d for d in observation["dock"] if d["slot"] == buy["slot"])
    return door_worth(slot["card"]) - slot["cost"]


def best_buy(observation: dict, buys: list[dict]) -> dict | None:
    """The purse-paid purchase with the best worth for its price, if it is worth it."""
    from_purse = [(purchase_gain(observation, a), a) for a in buys if a["from_vault"] == 0]
    gain, best = max(from_purse, key=lambda pair: pair[0], default=(0.0, None))
    return best if best is not None and gain >= BUY_THRESHOLD else None


def choose_main_action(observation: dict, by_type: dict[str, list[dict]]) -> dict:
    if by_type.get("place"):
        block = block_cards(observation)
        return max(by_type["place"], key=lambda a: placement_worth(block, a))
    purchase = best_buy(observation, by_type.get("buy", []))
    return purchase or by_type["take_coins"][0]


def richest_rivals(observation: dict, options: list[dict]) -> dict:
    """The steal that takes from the fullest purses."""
    purses = {p["seat"]: p["purse"] for p in observation["players"]}
    return max(options, key=lambda a: sum(min(purses[s], a["from"].count(s)) for s in
                                          set(a["from"])))


def strongest_door(observation: dict, options: list[dict]) -> dict:
    """Put a soldier coin, from the purse if possible, on a door of the profession in which
    the block has the most printed influence."""
    block = block_cards(observation)
    totals: Counter[str] = Counter()
    for card in block.values():
        totals[CARDS[card]["profession"]] += CARDS[card]["influence"]
    from_purse = [a for a in options if a["source"] == "purse"] or options
    return max(from_purse, key=lambda a: totals[CARDS[block[tuple(a["space"])]]["profession"]])


def choose_greedy(observation: dict, legal_actions: list[dict]) -> dict:
    by_type: dict[str, list[dict]] = {}
    for action in legal_actions:
        by_type.setdefault(action["type"], []).append(action)
    if "setup_vault" in by_type:
        return max(by_type["setup_vault"], key=lambda a: door_worth(a["card"]))
    if "setup_done" in by_type:
        return by_type["setup_done"][0]
    if "power" in by_type:
        return by_type["power"][0]
    if "take_coins" in by_type or "place" in by_type or "buy" in by_type:
        return choose_main_action(observation, by_type)
    if "keep" in by_type or "to_vault" in by_type:
        return max(by_type.get("keep", []) + by_type.get("to_vault", []),
                   key=lambda a: door_worth(a["card"]))
    if "discard" in by_type:
        return min(by_type["discard"], key=lambda a: door_worth(a["card"]))
    if "steal" in by_type:
        return richest_rivals(observation, by_type["steal"])
    if "soldier_coin" in by_type:
        return strongest_door(observation, by_type["soldier_coin"])
    if "builder_buy" in by_type:
        return max(by_type["builder_buy"],
                   key=lambda a: (a["from_vault"] == 0, purchase_gain(observation, a)))
    return legal_actions[0]


def make_choose(seed: int | None = None) -> Choose:
    """The greedy chooser (deterministic: `seed` is accepted for a uniform bot interface)."""
    return choose_greedy


if __name__ == "__main__":
    raise SystemExit(run_bot(make_choose, "a greedy Aldabas bot"))
