"""The shared table: the coin supply (and the box behind it), the deck, the discard pile
and the Dock, plus the end triggers they can set off."""

from __future__ import annotations

from engines.base import State, log_event

COINS_PER_PLAYER = 12
SOLO_SUPPLY = 15
MULTI_DOCK_COSTS = [0, 0, 1, 2, 3]
SOLO_DOCK_COSTS = [0, 1, 2, 3]


def trigger_end(state: State, reason: str) -> None:
    """Record the first end trigger (rulebook "Game End"); later ones change nothing."""
    if state["ending"] is None:
        state["ending"] = {"by": state["active"], "reason": reason}
        log_event(state, {"event": "end_triggered", "by": state["active"], "reason": reason})


def take_from_supply(state: State, count: int) -> None:
    """Take coins from the general supply, then from the box once it is empty."""
    from_supply = min(count, state["supply"])
    state["supply"] -= from_supply
    state["box_used"] += count - from_supply
    if from_supply and state["supply"] == 0:
        trigger_end(state, "supply_empty")


def gain_coins(state: State, holder: dict, count: int) -> None:
    take_from_supply(state, count)
    holder["purse"] += count


def pay(state: State, holder: dict, cost: int, from_vault: int) -> None:
    """Pay `cost` coins into the general supply, `from_vault` of them out of the vault."""
    holder["vault_coins"] -= from_vault
    holder["purse"] -= cost - from_vault
    state["supply"] += cost


def draw(state: State) -> int | None:
    """The top card of the deck, or None when it is exhausted."""
    return state["deck"].pop() if state["deck"] else None


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
    card = state["dock"][slot]
    state["dock"][slot] = None
    refill_dock(state)
    return card


def dock_view(state: State) -> list[dict]:
    return [
        {"slot": slot, "cost": cost, "card": state["dock"][slot]}
        for slot, cost in enumerate(state["costs"])
    ]
