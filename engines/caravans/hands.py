"""The players' hands and, per hand, the cards everyone saw arrive or offered (`known`).

Both are lists of per-seat lists that a state shares with the state before it: a change
goes to a new copy of the seat's list (`own_list`), never to the shared one."""

from __future__ import annotations

from engines.types import State


def own_list(state: State, key: str, seat: int) -> list[int]:
    """`state[key][seat]` ("hands" or "known") copied into a copy of `state[key]`, in its
    place: the list to change (the state before keeps the old ones)."""
    lists = list(state[key])
    lists[seat] = copy = list(lists[seat])
    state[key] = lists
    return copy


def receive_card(state: State, seat: int, card: int) -> None:
    """`card` joins `seat`'s hand in view of everyone (won at auction or traded)."""
    own_list(state, "hands", seat).append(card)
    own_list(state, "known", seat).append(card)


def take_from_hand(state: State, seat: int, card: int) -> None:
    """`card` leaves `seat`'s hand; nobody needs to remember it there any more."""
    own_list(state, "hands", seat).remove(card)
    if card in state["known"][seat]:
        own_list(state, "known", seat).remove(card)
