"""The table: the coin supply (and the box behind it), the deck, the discard pile and the
Dock, plus the end triggers they can set off; and what each player holds."""

from __future__ import annotations

from typing import TypedDict

from engines.base import log_event
from engines.types import End, State

from .components import COLS, ROWS

END_REASONS = ("block_full", "supply_empty", "deck_exhausted")
RIVAL = "rival"
"""Who acts in the Rival's turn (solo), where a seat would."""


def trigger_end(state: State, reason: str) -> None:
    """Record the first end trigger (rulebook "Game End"); later ones change nothing. The
    Rival sets it off as seat None."""
    if state["end_trigger"] is None:
        seat = None if state["active"] == RIVAL else state["active"]
        trigger: End = {"reason": reason, "seat": seat, "text": trigger_text(reason, seat)}
        state["end_trigger"] = trigger
        log_event(state, "end_triggered", trigger)


def trigger_text(reason: str, seat: int | None) -> str:
    who = "the Rival" if seat is None else f"seat {seat}"
    return {
        "block_full": f"{who} filled the last space of a block",
        "supply_empty": f"{who} took the last coin of the general supply",
        "deck_exhausted": f"the deck could not refill the Dock ({who} to play)",
    }[reason]


def take_from_supply(state: State, count: int) -> None:
    """Take coins from the general supply, then from the box once it is empty."""
    from_supply = min(count, state["supply"])
    state["supply"] -= from_supply
    state["box_used"] += count - from_supply
    if from_supply and state["supply"] == 0:
        trigger_end(state, "supply_empty")


class Holder(TypedDict):
    """What a player (or the Rival) holds."""

    hand: list[int]
    vault_cards: list[int]
    vault_coins: int
    purse: int
    block: list[int | None]
    """Per block space `row * 4 + col`: its door, or None (always None at the Vault)."""
    coins: list[int]
    """Per block space: the coins on its door."""


class RivalHolder(Holder):
    goals: list[int]


def new_holder() -> Holder:
    return {"hand": [], "vault_cards": [], "vault_coins": 0, "purse": 0,
            "block": [None] * (COLS * ROWS), "coins": [0] * (COLS * ROWS)}


def gain_coins(state: State, holder: Holder, count: int) -> None:
    take_from_supply(state, count)
    holder["purse"] += count


def pay(state: State, holder: Holder, cost: int, from_vault: int) -> None:
    """Pay `cost` coins into the general supply, `from_vault` of them out of the vault."""
    holder["vault_coins"] -= from_vault
    holder["purse"] -= cost - from_vault
    state["supply"] += cost


def deal(state: State) -> int:
    """The top card of the deck at setup (it never runs out there)."""
    card: int = state["deck"].pop()
    return card


def draw(state: State) -> int | None:
    """The top card of the deck, or None when it is exhausted."""
    card: int | None = state["deck"].pop() if state["deck"] else None
    return card


def refill_dock(state: State) -> None:
    """Slide the Dock's doors left over any gap, then deal into the rightmost slot."""
    doors = [card for card in state["dock"] if card is not None]
    dock = doors + [None] * (len(state["dock"]) - len(doors))
    if dock[-1] is None:
        card = draw(state)
        if card is None:
            trigger_end(state, "deck_exhausted")
        dock[-1] = card
    state["dock"] = dock


def take_from_dock(state: State, slot: int) -> int:
    """Remove the door in `slot` and refill the Dock."""
    card: int = state["dock"][slot]
    state["dock"][slot] = None
    refill_dock(state)
    return card


class DockSlot(TypedDict):
    slot: int
    cost: int
    card: int | None


def dock_view(state: State) -> list[DockSlot]:
    return [
        {"slot": slot, "cost": cost, "card": state["dock"][slot]}
        for slot, cost in enumerate(state["costs"])
    ]
