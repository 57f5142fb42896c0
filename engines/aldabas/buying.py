"""Buying a door from the Dock: the discounted cost and the ways to pay it."""

from __future__ import annotations

from typing import Literal, TypedDict

from engines.base import log_event
from engines.errors import IllegalAction
from engines.types import State

from .block import count_in_block
from .table import Holder, pay, take_from_dock


def discount(holder: Holder) -> int:
    """One coin per Builder (key Aldaba) in the block; several add up."""
    return count_in_block(holder["block"], "B2D")


def costs(state: State, holder: Holder) -> list[int]:
    """Each slot's printed cost minus the holder's discount, never below zero."""
    off = discount(holder)
    return [max(0, printed - off) for printed in state["costs"]]


def payment_range(holder: Holder, price: int) -> range:
    """How many of the coins may come from the vault (the rest from the purse)."""
    return range(max(0, price - holder["purse"]), min(price, holder["vault_coins"]) + 1)


class BuyAction(TypedDict):
    """`buy`, or `builder_buy` (a Builder's power): the same fields."""

    type: Literal["buy", "builder_buy"]
    slot: int
    from_vault: int


def buy_options(state: State, holder: Holder, action_type: Literal["buy", "builder_buy"]
                ) -> list[BuyAction]:
    options: list[BuyAction] = []
    funds = holder["purse"] + holder["vault_coins"]
    for slot, (card, price) in enumerate(zip(state["dock"], costs(state, holder), strict=True)):
        if card is None or price > funds:  # (no way to pay: an empty payment_range)
            continue
        for from_vault in payment_range(holder, price):
            options.append({"type": action_type, "slot": slot, "from_vault": from_vault})
    return options


def check_buy(state: State, holder: Holder, slot: int, from_vault: int) -> int:
    """The price of a legal purchase; IllegalAction names the rule a purchase breaks."""
    if not 0 <= slot < len(state["dock"]):
        raise IllegalAction(f"the Dock has slots 0 to {len(state['dock']) - 1}, not {slot}")
    if state["dock"][slot] is None:
        raise IllegalAction(f"Dock slot {slot} is empty: the deck could not refill it")
    price = costs(state, holder)[slot]
    if price > holder["purse"] + holder["vault_coins"]:
        raise IllegalAction(
            f"the door in slot {slot} costs {price} coins and you have only "
            f"{holder['purse'] + holder['vault_coins']} in purse and vault"
        )
    if from_vault not in payment_range(holder, price):
        raise IllegalAction(
            f"paying {price} coins with {from_vault} from the vault is impossible: you have "
            f"{holder['vault_coins']} in the vault and {holder['purse']} in the purse"
        )
    return price


def buy(state: State, seat: int, slot: int, from_vault: int) -> None:
    """Claim the door into the hand, paying into the general supply; the Dock refills."""
    holder: Holder = state["players"][seat]
    price = check_buy(state, holder, slot, from_vault)
    pay(state, holder, price, from_vault)
    card = take_from_dock(state, slot)
    holder["hand"].append(card)
    log_event(state, "buy", {"seat": seat, "slot": slot, "card": card, "paid": price},
              private={seat: {"from_vault": from_vault}})
