"""Aldabas's fixed action index space (engines.action_space) and the bounds it rests on.

Every action of the schema, a withdrawal of 1 to `MAX_COINS` coins among them: the schema
bounds `withdraw.coins` only by MAX_AMOUNT, and no vault can ever hold more than the coins
in play, which `max_coins` bounds.
"""

from __future__ import annotations

from engines.action_space import ActionSpace, schema_actions
from engines.types import JsonObject

from .actions import TAKE_COINS
from .components import (
    CARD_TYPE,
    COINS_PER_PLAYER,
    COLS,
    FULL_DECK,
    ROWS,
    SOLO_DECK,
    SOLO_SUPPLY,
    STARTING_HAND,
)
from .describe import MAX_EXTRA
from .flow import ACTIONS_PER_TURN
from .powers import SEAHORSE_COINS
from .schemas import ACTIONS, MAX_COST

POWERS_PER_PLACEMENT = 3
"""The new door's, the door's directly left of it, the door's directly below it."""
BLOCK_DOORS = COLS * ROWS - 1
MAX_GAIN_PER_TURN = ACTIONS_PER_TURN * max(TAKE_COINS, POWERS_PER_PLACEMENT * SEAHORSE_COINS)
"""The most coins a player's turn takes from the supply (or the box): two actions, each
Take Coins or a placement whose three Powers are all Seahorses."""


def _deck(options: JsonObject) -> list[int]:
    return SOLO_DECK if options.get("mode") == "solo" else FULL_DECK


def soldier_coins(options: JsonObject) -> int:
    """The most coins one Soldier power moves: one, plus one per Noble (Influence 2) in the
    block, at most every N2 of the deck."""
    return 1 + sum(1 for card in _deck(options) if CARD_TYPE[card].id == "N2")


def max_coins(num_players: int, options: JsonObject) -> int:
    """More coins than can ever be out of the box at once (purses, vaults, doors and the
    supply together), so more than any vault holds.

    They are the supply's at the start plus those taken from the box, and the box gives
    coins only once the supply is empty, which sets off the end (engines/aldabas/table.py
    `take_from_supply`). From then on the game lasts at most the rest of that turn and one
    turn of each other player (solo: the rest of the player's turn, or the Rival's turn
    that set it off, whose three Powers move at most `soldier_coins` each)."""
    if options.get("mode") == "solo":
        rival_turn = POWERS_PER_PLACEMENT * soldier_coins(options)
        return SOLO_SUPPLY + MAX_EXTRA + max(MAX_GAIN_PER_TURN, rival_turn)
    return num_players * (COINS_PER_PLAYER + MAX_GAIN_PER_TURN)


def _setups() -> list[tuple[int, JsonObject]]:
    return [(n, {"mode": "multi"}) for n in (2, 3, 4)] + [(1, {"mode": "solo"})]


MAX_COINS = max(max_coins(n, options) for n, options in _setups())
SPACE = ActionSpace(schema_actions(ACTIONS, values={
    "withdraw": {"coins": range(1, MAX_COINS + 1)},
}))


def max_decisions(num_players: int, options: JsonObject) -> int:
    """More decisions than any game takes.

    - setup: one door to the vault, up to four discards, setup_done: STARTING_HAND + 1 each;
    - buys (actions and Builders): each takes a door the deck put into the Dock, so at most
      the deck's doors;
    - Take Coins: before the end is set off each takes two from the supply, which holds its
      start plus what buys paid back (at most MAX_COST each); after it, two actions for
      each of at most `num_players` turns;
    - placements: one per space of each block, each followed by at most three Powers (a
      Soldier's with one decision per coin it moves), end_powers, and withdrawals of coins
      its Lion Soldiers (S2) put into the vault (the only way coins get there);
    - discards down to the hand limit: each door reaches a hand at most once.
    """
    deck = len(_deck(options))
    soldier = soldier_coins(options)
    supply = max_coins(num_players, options)
    takes = (supply + MAX_COST * deck) // TAKE_COINS + ACTIONS_PER_TURN * num_players
    per_placement = 1 + POWERS_PER_PLACEMENT * (1 + soldier) + POWERS_PER_PLACEMENT * soldier
    placements = BLOCK_DOORS * num_players
    return ((STARTING_HAND + 1) * num_players + deck + takes + placements * (1 + per_placement)
            + deck)
