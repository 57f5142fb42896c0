"""What one seat may see, and states that differ only in what that seat may not see.

Secret: the cards in other players' hands (except those everyone saw arrive or offered)
and the order of the deck. Everything else (gold, routes, control, camels, items, the
bank, the face-up and discarded cards) is public.
"""

from __future__ import annotations

from engines.base import State, clone
from engines.rng import Rng

from .data import CARDS

PUBLIC_KEYS = ("colours", "phase", "turn", "final_turn", "gold", "camel_up", "owner", "control",
               "rop", "shah", "eyes", "pirate_queen", "face_up", "discard", "bidding",
               "actions", "setup_queue")


def view(state: State, seat: int | None) -> dict:
    """A seat's view; a spectator (`seat=None`) has no hand."""
    out = clone({key: state[key] for key in PUBLIC_KEYS if key in state})
    out["hand"] = None if seat is None else sorted(state["hands"][seat])
    out["hand_counts"] = [len(hand) for hand in state["hands"]]
    out["known_cards"] = [sorted(known) for known in state["known"]]
    out["deck_count"] = len(state["deck"])
    out["bank"] = {
        "passages": [c for c in state["colours"] if state["rop"][c] is None],
        "eyes": state["eyes"] is None,
        "pirate_queen": state["pirate_queen"] is None,
    }
    return out


def hidden_variant(state: State, seat: int, rng: Rng) -> State:
    """Reshuffle the unseen cards (other hands' secret cards and the deck) within each
    colour: everyone knows each player's secret cards came from their own colour's pile and
    the deck was stacked colour by colour, so only the cards of one colour may trade places."""
    out = clone(state)
    slots = [(p, i) for p, hand in enumerate(out["hands"]) if p != seat
             for i, card in enumerate(hand) if card not in out["known"][p]]
    slots += [("deck", i) for i in range(len(out["deck"]))]
    by_colour: dict[str, list] = {}
    for slot in slots:
        by_colour.setdefault(CARDS[_card_at(out, slot)]["colour"], []).append(slot)
    for colour_slots in by_colour.values():
        cards = [_card_at(out, slot) for slot in colour_slots]
        rng.shuffle(cards)
        for slot, card in zip(colour_slots, cards, strict=True):
            _put(out, slot, card)
    return out


def _card_at(state: State, slot: tuple) -> int:
    where, index = slot
    return state["deck"][index] if where == "deck" else state["hands"][where][index]


def _put(state: State, slot: tuple, card: int) -> None:
    where, index = slot
    if where == "deck":
        state["deck"][index] = card
    else:
        state["hands"][where][index] = card
