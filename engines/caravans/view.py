"""What one seat may see, and states that differ only in what that seat may not see.

Secret: the cards in other players' hands (except those everyone saw arrive or offered)
and the order of the deck. Everything else (gold, routes, control, camels, items, the
bank, the face-up and discarded cards) is public.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict, cast

import orjson

from engines.base import clone
from engines.rng import Rng
from engines.types import State
from engines.view_memo import Memo

from .components import CARDS

PUBLIC_KEYS = ("colours", "phase", "turn", "final_turn", "gold", "camel_up", "owner", "control",
               "rop", "shah", "eyes", "pirate_queen", "face_up", "discard", "bidding",
               "actions", "setup_queue")


class Bank(TypedDict):
    passages: list[str]
    eyes: bool
    pirate_queen: bool


class View(TypedDict):
    """The state's PUBLIC_KEYS as they are, then what is derived from the secret parts."""

    colours: list[str]
    phase: str
    turn: int
    final_turn: bool
    gold: list[int]
    camel_up: list[bool]
    owner: dict[str, int | None]
    control: dict[str, int]
    rop: dict[str, int | None]
    shah: int
    eyes: int | None
    pirate_queen: int | None
    face_up: list[int]
    discard: list[int]
    bidding: NotRequired[dict[str, Any]]
    """start, opener, auctioned, auction {item, high, amount, in, to_act} | None, naming"""
    actions: NotRequired[dict[str, Any]]
    """order, index, offers, acted, offer {from, to, give, take} | None"""
    setup_queue: list[int]
    hand: list[int] | None
    hand_counts: list[int]
    known_cards: list[list[int]]
    deck_count: int
    bank: Bank


def view(state: State, seat: int | None) -> View:
    """A seat's view; a spectator (`seat=None`) has no hand."""
    return view_with(state, clone({key: state[key] for key in PUBLIC_KEYS if key in state}),
                     None if seat is None else sorted(state["hands"][seat]),
                     [sorted(known) for known in state["known"]])


def view_parts(state: State, seat: int | None, memo: Memo) -> dict[str, Any]:
    """`view` without its copies (the writer reads the state's parts as they are), the cards
    known and in hand kept in `memo` by the parts of the state they show
    (engines.observation_json)."""
    hands, known = state["hands"], state["known"]
    hand = None if seat is None else orjson.Fragment(
        memo.json(("hand", seat), hands[seat], lambda: sorted(hands[seat])))
    return cast(dict[str, Any], view_with(
        state, {key: state[key] for key in PUBLIC_KEYS if key in state}, hand,
        orjson.Fragment(memo.json("known", known, lambda: [sorted(cards) for cards in known]))))


def view_with(state: State, public: dict[str, Any], hand: Any, known_cards: Any) -> View:
    """The view from its public parts, the hand and the known cards (as values, or as JSON
    fragments)."""
    out: View = public  # type: ignore[assignment]  # PUBLIC_KEYS are the View's first keys
    out["hand"] = hand
    out["hand_counts"] = [len(hand) for hand in state["hands"]]
    out["known_cards"] = known_cards
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
    out: State = clone(state)
    slots: list[tuple[int | str, int]] = [(p, i) for p, hand in enumerate(out["hands"]) if p != seat
             for i, card in enumerate(hand) if card not in out["known"][p]]
    slots += [("deck", i) for i in range(len(out["deck"]))]
    by_colour: dict[str, list[tuple[int | str, int]]] = {}
    for slot in slots:
        by_colour.setdefault(CARDS[_card_at(out, slot)]["colour"], []).append(slot)
    for colour_slots in by_colour.values():
        cards = [_card_at(out, slot) for slot in colour_slots]
        rng.shuffle(cards)
        for slot, card in zip(colour_slots, cards, strict=True):
            _put(out, slot, card)
    return out


def _card_at(state: State, slot: tuple[int | str, int]) -> int:
    where, index = slot
    card: int = state["deck"][index] if where == "deck" else state["hands"][where][index]
    return card


def _put(state: State, slot: tuple[int | str, int], card: int) -> None:
    where, index = slot
    if where == "deck":
        state["deck"][index] = card
    else:
        state["hands"][where][index] = card
