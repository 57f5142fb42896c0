"""Aldabas's observation tensor (engines.tensor). A door is written as its kind, one of 30
(type x colour: doors of one kind play alike), coins as counts up to
`action_space.MAX_COINS`:

solo, the number of players (4), phase (11), the seat to act (4, relative) or the Rival,
actions left, the Powers available (12 block spaces), the open Power (5 types, its coins
left, its two drawn doors when you drew them), supply, box, deck, the discard pile (30), the
Dock (5 slots x (30 kinds + cost)), the end trigger and its reason (3); per seat, relative
(4): purse, hand size, vault doors, and its block (12 spaces x (30 kinds + coins)); your
hand (30), your vault doors (30) and coins; the Rival's goals (30), hand (30), next door to
build (30), vault coins and doors, block (12 x 31).
"""

from __future__ import annotations

from engines.tensor import Writer, relative
from engines.types import JsonObject

from .action_space import MAX_COINS, soldier_coins
from .block import index
from .components import CARD_COLOUR, CARD_TYPE, CARDS, COLOURS, COLS, DOOR_TYPES, ROWS
from .flow import PHASES
from .schemas import MAX_COST, MAX_SEATS, POWERS, SLOTS
from .table import END_REASONS, RIVAL

TYPES = list(DOOR_TYPES)
KINDS = len(TYPES) * len(COLOURS)
KIND = [TYPES.index(CARD_TYPE[card].id) * len(COLOURS) + COLOURS.index(CARD_COLOUR[card])
        for card in range(len(CARDS))]
"""Each door's kind: its type and colour."""
COPIES = max(KIND.count(kind) for kind in range(KINDS))
POWER_KINDS = sorted({branch["properties"]["kind"]["const"] for branch in POWERS})
SPACES = COLS * ROWS
MOST_SOLDIER_COINS = soldier_coins({"mode": "multi"})
_SPACE = KINDS + 1
BLOCK_HIGH = ([1.0] * KINDS + [float(MAX_COINS)]) * SPACES


def write(w: Writer, observation: JsonObject) -> None:
    players = observation["players"]
    seats = len(players)
    me = observation["seat"]
    w.flag(observation["mode"] == "solo")
    w.one_hot(seats - 1, MAX_SEATS)
    w.one_hot(PHASES.index(observation["phase"]), len(PHASES))
    active = observation["active"]
    w.one_hot(relative(active, me, seats) if isinstance(active, int) else None, MAX_SEATS)
    w.flag(active == RIVAL)
    w.number(observation["actions_left"], 2)
    w.flags((index(col, row) for col, row in observation["pending_powers"]), SPACES)
    _power(w, observation["power"])
    w.number(observation["supply"], MAX_COINS)
    w.number(observation["box_used"], MAX_COINS)
    w.number(observation["deck_count"], len(CARDS))
    _doors(w, observation["discard"])
    dock = {slot["slot"]: slot for slot in observation["dock"]}
    for slot in range(SLOTS):
        card = dock[slot]["card"] if slot in dock else None
        w.one_hot(None if card is None else KIND[card], KINDS)
        w.number(dock[slot]["cost"] if slot in dock else 0, MAX_COST)
    trigger = observation["end_trigger"]
    w.flag(trigger is not None)
    w.one_hot(None if trigger is None else END_REASONS.index(trigger["reason"]),
              len(END_REASONS))
    for rel in range(MAX_SEATS):
        _player(w, players[(rel + (me or 0)) % seats] if rel < seats else None)
    you = observation["you"]
    _doors(w, you["hand"] if you else [])
    _doors(w, you["vault_cards"] if you else [])
    w.number(you["vault_coins"] if you else 0, MAX_COINS)
    _rival(w, observation.get("rival"))


def _doors(w: Writer, cards: list[int]) -> None:
    w.counts((KIND[card] for card in cards), KINDS, COPIES)


def _power(w: Writer, power: JsonObject | None) -> None:
    w.one_hot(None if power is None else POWER_KINDS.index(power["kind"]), len(POWER_KINDS))
    w.number(power.get("coins_left", 0) if power else 0, MOST_SOLDIER_COINS)
    _doors(w, power.get("drawn", []) if power else [])


def _block(w: Writer, doors: list[JsonObject]) -> None:
    """Per space: the door's kind (one-hot) and the coins on it."""
    entries = []
    for door in doors:
        at = _SPACE * index(*door["space"])
        entries += [(at + KIND[door["card"]], 1.0), (at + KINDS, door["coins"])]
    w.entries(entries, _SPACE * SPACES, BLOCK_HIGH)


def _player(w: Writer, player: JsonObject | None) -> None:
    w.number(player["purse"] if player else 0, MAX_COINS)
    w.number(player["hand_size"] if player else 0, len(CARDS))
    w.number(player["vault_card_count"] if player else 0, len(CARDS))
    _block(w, player["block"] if player else [])


def _rival(w: Writer, rival: JsonObject | None) -> None:
    _doors(w, rival["goals"] if rival else [])
    _doors(w, rival["hand"] if rival else [])
    w.one_hot(KIND[rival["hand"][0]] if rival and rival["hand"] else None, KINDS)
    w.number(rival["vault_coins"] if rival else 0, MAX_COINS)
    w.number(rival["vault_card_count"] if rival else 0, len(CARDS))
    _block(w, rival["block"] if rival else [])
