"""A full state behind an observation: the doors and coins other seats keep secret, and
the deck order, drawn.

Hidden (rulebook "Setup" steps 2 and 4, "Your Vault & Your Purse"; rules/aldabas.md "Turn
details"): other players' hands and vaults (cards and coins), the Rival's vault doors
(solo), the two doors another player drew for a Fisher, and the deck's order.

What the log pins down:
- Vault coins: every coin a player gains or spends is logged (only whether it came from
  purse or vault is private), and the purse is public, so a vault holds exactly what the
  player holds in all minus the purse (`vault_coins`).
- Bought doors are public: one not seen since is in its buyer's hand, or in their vault
  if a Clergy power (`door_to_vault`, the door private) came after the purchase. Which
  one the Clergy took is open, as long as the hand always held a door for every door
  that left it: `seat_story` counts the choices that fit, and one is drawn (uniformly
  among them).
- Every other secret door is one no one has seen; those doors, shuffled, fill the other
  hands, vaults, drawn pairs and the deck, whose sizes the observation gives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from engines.base import clone
from engines.errors import InvalidState
from engines.rng import Rng
from engines.types import Event, JsonObject, State

from .block import index
from .components import COLS, FULL_DECK, RIVAL_HAND, ROWS, SOLO_DECK, SOLO_SUPPLY, STARTING_HAND
from .table import Holder, RivalHolder

PRIVATE_EVENT_FIELDS = {
    "setup": ("hand",), "setup_vault": ("card",), "buy": ("from_vault",),
    "coin_on_door": ("source",), "draw": ("cards",), "fish": ("kept",),
    "door_to_vault": ("card",),
}
"""The log fields only the seat concerned sees (schemas.EVENTS)."""

Op = tuple[str, int]
"""A step of a seat's hand in the log: ("gain", n) unseen doors, ("lose", 1) an unseen
door leaving (shown), ("bought", card), ("clergy", 0) a door of the hand to the vault."""


def determinize(observation: JsonObject, rng: Rng) -> State:
    seat: int | None = observation["seat"]
    solo = observation["mode"] == "solo"
    log = observation["log"]
    holders = [public_holder(p) for p in observation["players"]]
    if seat is not None:
        you = observation["you"]
        own = holders[seat]
        own["hand"], own["vault_cards"] = list(you["hand"]), list(you["vault_cards"])
        own["vault_coins"] = you["vault_coins"]
    unseen = unseen_doors(observation, solo)
    others = [n for n in range(len(holders)) if n != seat]
    stories = {n: seat_story(log, n, observation["players"][n], unseen, rng) for n in others}
    known = {card for hand, vault, _, _ in stories.values() for card in hand + vault}
    pool = [card for card in unseen if card not in known]
    rng.shuffle(pool)
    for n, (hand, vault, hand_unknown, vault_unknown) in stories.items():
        holder = holders[n]
        holder["hand"] = hand + take(pool, hand_unknown)
        holder["vault_cards"] = vault + take(pool, vault_unknown)
        rng.shuffle(holder["hand"])
        rng.shuffle(holder["vault_cards"])
        holder["vault_coins"] = coins_held(log, n) - holder["purse"]
        if holder["vault_coins"] < 0:
            raise InvalidState(f"seat {n} holds fewer coins than its purse")
    rival = None
    if solo:
        rival = public_rival(observation["rival"])
        rival["vault_cards"] = take(pool, observation["rival"]["vault_card_count"])
    power = hidden_power(observation["power"], pool)
    deck = take(pool, observation["deck_count"])
    if pool:
        raise InvalidState(f"{len(pool)} unseen doors have no place")
    return {
        "num_players": len(holders),
        "options": options(observation),
        "mode": observation["mode"],
        "deck": deck,
        "discard": list(observation["discard"]),
        "costs": [slot["cost"] for slot in observation["dock"]],
        "dock": [slot["card"] for slot in observation["dock"]],
        "supply": observation["supply"],
        "box_used": observation["box_used"],
        "players": holders,
        "rival": rival,
        "end_trigger": clone(observation["end_trigger"]),
        "active": observation["active"],
        "phase": observation["phase"],
        "power": power,
        "pending_powers": [index(col, row) for col, row in observation["pending_powers"]],
        "actions_left": observation["actions_left"],
        "turn_number": observation["turn"],
    }


def take(pool: list[int], count: int) -> list[int]:
    """The first `count` doors of the (shuffled) pool, removed from it."""
    if count > len(pool):
        raise InvalidState(f"{count} secret doors, only {len(pool)} unseen")
    taken = pool[:count]
    del pool[:count]
    return taken


def options(observation: JsonObject) -> JsonObject:
    """The setup options, read back from the setup events."""
    if observation["mode"] == "multi":
        return {"mode": "multi"}
    events = {event["event"]: event for event in observation["log"]}
    return {"mode": "solo", "rival_extra_hand": len(events["rival_setup"]["hand"]) - RIVAL_HAND,
            "extra_supply": events["setup"]["supply"] - SOLO_SUPPLY}


def block_of(doors: list[dict[str, Any]]) -> tuple[list[int | None], list[int]]:
    block: list[int | None] = [None] * (COLS * ROWS)
    coins = [0] * (COLS * ROWS)
    for door in doors:
        idx = index(*door["space"])
        block[idx], coins[idx] = door["card"], door["coins"]
    return block, coins


def public_holder(player: JsonObject) -> Holder:
    block, coins = block_of(player["block"])
    return {"hand": [], "vault_cards": [], "vault_coins": 0, "purse": player["purse"],
            "block": block, "coins": coins}


def public_rival(view: JsonObject) -> RivalHolder:
    block, coins = block_of(view["block"])
    return {"hand": list(view["hand"]), "vault_cards": [], "vault_coins": view["vault_coins"],
            "purse": 0, "block": block, "coins": coins, "goals": list(view["goals"])}


def hidden_power(power: JsonObject | None, pool: list[int]) -> JsonObject | None:
    """The open power; another player's two drawn doors drawn from the pool."""
    if power is None or "drawn_count" not in power:
        shown: JsonObject | None = clone(power)
        return shown
    return {"kind": power["kind"], "drawn": take(pool, power["drawn_count"])}


def unseen_doors(observation: JsonObject, solo: bool) -> list[int]:
    """The doors of this game's deck in no one's sight, in id order."""
    seen = [*observation["discard"], *(slot["card"] for slot in observation["dock"])]
    for player in observation["players"]:
        seen += [door["card"] for door in player["block"]]
    if observation["you"] is not None:
        seen += observation["you"]["hand"] + observation["you"]["vault_cards"]
    if solo:
        rival = observation["rival"]
        seen += rival["goals"] + rival["hand"] + [door["card"] for door in rival["block"]]
    power = observation["power"]
    if power is not None and "drawn" in power:
        seen += power["drawn"]
    shown = {card for card in seen if card is not None}
    return [card for card in (SOLO_DECK if solo else FULL_DECK) if card not in shown]


def coins_held(log: list[Event], seat: int) -> int:
    """Coins in `seat`'s purse and vault together, from the coins gained and spent."""
    held = 0
    for event in log:
        kind = event["event"]
        if kind == "steal":
            held -= event["from"].count(seat)
        if event.get("seat") != seat:
            continue
        if kind == "setup_discard":
            held += 1
        elif kind in ("take_coins", "gain"):
            held += event["coins"]
        elif kind == "steal":
            held += len(event["from"])
        elif kind == "buy":
            held -= event["paid"]
        elif kind == "coin_on_door":
            held -= 1
    return held


def hand_ops(log: list[Event], seat: int, unseen: set[int]) -> list[Op]:
    """What the log shows of `seat`'s hand, step by step."""
    ops: list[Op] = []
    bought: set[int] = set()
    for event in log:
        kind = event["event"]
        if kind == "setup":
            ops.append(("gain", STARTING_HAND))
        if event.get("seat") != seat:
            continue
        if kind == "buy":
            bought.add(event["card"])
            if event["card"] in unseen:
                ops.append(("bought", event["card"]))
        elif kind in ("setup_vault", "setup_discard") or (
                kind in ("place", "discard") and event["card"] not in bought):
            ops.append(("lose", 1))
        elif kind == "fish":
            ops.append(("gain", 1))
        elif kind == "draw":
            ops.append(("gain", event["count"]))
        elif kind == "door_to_vault":
            ops.append(("clergy", 0))
    return ops


def seat_story(log: list[Event], seat: int, player: JsonObject, unseen: list[int], rng: Rng
               ) -> tuple[list[int], list[int], int, int]:
    """Another seat's secret doors: (bought doors in hand, bought doors in vault, unseen
    doors in hand, unseen doors in vault), one way the log could have gone, drawn
    uniformly among the ways Clergy powers could have chosen."""
    ops = hand_ops(log, seat, set(unseen))
    ways = story_counter(ops)
    if ways(0, 0, frozenset()) == 0:
        raise InvalidState(f"the log of seat {seat} fits no hand")
    step, loose, in_hand = 0, 0, frozenset[int]()
    vaulted: list[int] = []
    while step < len(ops):
        kind, value = ops[step]
        step += 1
        if kind == "gain":
            loose += value
        elif kind == "lose":
            loose -= 1
        elif kind == "bought":
            in_hand |= {value}
        else:
            choices: list[tuple[int | None, int]] = [
                (card, ways(step, loose, in_hand - {card})) for card in sorted(in_hand)]
            if loose:
                choices.append((None, ways(step, loose - 1, in_hand)))
            card = weighted(choices, rng)
            if card is None:
                loose -= 1
            else:
                in_hand -= {card}
                vaulted.append(card)
    vault_unknown = player["vault_card_count"] - len(vaulted)
    if loose + len(in_hand) != player["hand_size"] or vault_unknown < 0:
        raise InvalidState(f"the log of seat {seat} does not add up to its hand and vault")
    return sorted(in_hand), vaulted, loose, vault_unknown


def story_counter(ops: list[Op]) -> Callable[[int, int, frozenset[int]], int]:
    """`ways(step, loose, in_hand)`: how many ways the rest of `ops` can go from a hand of
    `loose` unseen doors and the bought doors `in_hand` (a Clergy power takes one of them
    or an unseen one; an unseen door can leave only while the hand holds one)."""

    @cache
    def ways(step: int, loose: int, in_hand: frozenset[int]) -> int:
        for position in range(step, len(ops)):
            kind, value = ops[position]
            if kind == "gain":
                loose += value
            elif kind == "lose":
                loose -= 1
                if loose < 0:
                    return 0
            elif kind == "bought":
                in_hand = in_hand | {value}
            else:
                rest = ways(position + 1, loose - 1, in_hand) if loose else 0
                return rest + sum(ways(position + 1, loose, in_hand - {card})
                                  for card in in_hand)
        return 1

    return ways


def weighted(choices: Sequence[tuple[int | None, int]], rng: Rng) -> int | None:
    """One of `choices`, each (value, weight), drawn with a chance in proportion."""
    pick = rng.below(sum(weight for _, weight in choices))
    for value, weight in choices:
        if pick < weight:
            return value
        pick -= weight
    raise AssertionError("unreachable")
