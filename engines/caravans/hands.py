"""The players' hands and, per hand, the cards everyone saw arrive or offered (`known`)."""

from __future__ import annotations

from engines.types import State


def receive_card(state: State, seat: int, card: int) -> None:
    """`card` joins `seat`'s hand in view of everyone (won at auction or traded)."""
    state["hands"][seat].append(card)
    state["known"][seat].append(card)


def take_from_hand(state: State, seat: int, card: int) -> None:
    """`card` leaves `seat`'s hand; nobody needs to remember it there any more."""
    state["hands"][seat].remove(card)
    if card in state["known"][seat]:
        state["known"][seat].remove(card)
