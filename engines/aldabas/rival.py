"""Aldabas Solidad: the automated Rival (rulebook "Solo Gameplay")."""

from __future__ import annotations

from engines.base import log_event
from engines.types import State

from .block import SPACES, below, is_full, left_of, soldier_count
from .components import CARD_TYPE, influence, kind
from .copies import copy_holder
from .table import (
    RIVAL,
    RivalHolder,
    draw,
    refill_dock,
    take_from_dock,
    take_from_supply,
    trigger_end,
)


def goal_aldabas(state: State) -> set[str]:
    return {CARD_TYPE[card].aldaba for card in state["rival"]["goals"]}


def appraise(state: State, card: int, cost: int) -> int:
    """Influence, minus the slot's cost, plus 2 if its Aldaba matches a Rival Goal."""
    bonus = 2 if CARD_TYPE[card].aldaba in goal_aldabas(state) else 0
    return influence(card) - cost + bonus


def choose_claim(state: State) -> int | None:
    """The slot the Rival claims: highest value; ties go to the more expensive slot."""
    offers = [
        (appraise(state, card, state["costs"][slot]), state["costs"][slot], slot)
        for slot, card in enumerate(state["dock"])
        if card is not None
    ]
    return max(offers)[2] if offers else None


def claim(state: State) -> None:
    """Step 1: add the most valuable Dock door to the right end of the Rival's hand."""
    slot = choose_claim(state)
    if slot is None:
        return
    card = take_from_dock(state, slot)
    state["rival"]["hand"].append(card)
    log_event(state, "rival_claim", {"slot": slot, "card": card})


def next_space(rival: RivalHolder) -> int:
    """Spaces 1..11 fill row by row from the Vault's row, left to right."""
    return next(idx for idx in SPACES if rival["block"][idx] is None)


def build(state: State) -> None:
    """Step 2: with three or more doors in hand, build the leftmost one (colour ignored)."""
    rival = state["rival"]
    if len(rival["hand"]) < 3:
        return
    card = rival["hand"].pop(0)
    idx = next_space(rival)
    rival["block"][idx] = card
    log_event(state, "rival_build", {"card": card, "space": idx})
    if is_full(rival["block"]):
        trigger_end(state, "block_full")
    for source in (idx, left_of(idx), below(idx)):
        if source is not None and rival["block"][source] is not None:
            use_power(state, rival["block"][source], idx)


def use_power(state: State, card: int, new_idx: int) -> None:
    """The Rival's modified powers; doors not listed by the rulebook have no effect."""
    rival = state["rival"]
    door = kind(card)
    if door == "S1":
        coins = soldier_count(rival["block"])
        take_from_supply(state, coins)
        rival["coins"][new_idx] += coins
    elif door == "S2":
        coins = soldier_count(rival["block"])
        take_from_supply(state, coins)
        rival["vault_coins"] += coins
    elif door == "F1":
        fish(state)
    elif door == "C1":
        claim(state)
    else:
        return
    log_event(state, "rival_power", {"card": card})


def fish(state: State) -> None:
    """Draw two; keep the more valuable (the first drawn on a tie), discard the other."""
    drawn = [card for card in (draw(state), draw(state)) if card is not None]
    if not drawn:
        return
    keep = max(drawn, key=lambda card: (appraise(state, card, 0), -drawn.index(card)))
    state["rival"]["hand"].append(keep)
    state["discard"].extend(card for card in drawn if card != keep)


def advance_dock(state: State) -> None:
    """Step 3: discard the door in the cost-zero slot, then refill the Dock."""
    card = state["dock"][0]
    if card is not None:
        state["discard"].append(card)
        state["dock"][0] = None
    refill_dock(state)
    log_event(state, "rival_advance", {"discarded": card})


def rival_turn(state: State) -> None:
    """The Rival's three steps, on a copy of its holdings (the state before keeps its own:
    engines.aldabas.copies)."""
    state["rival"] = copy_holder(state["rival"])
    log_event(state, "turn", {"seat": RIVAL, "turn": state["turn_number"]})
    claim(state)
    build(state)
    advance_dock(state)
