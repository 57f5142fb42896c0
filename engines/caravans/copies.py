"""How `apply` copies a Caravans state (engines.base.Rules._copy_for_apply): the gold and the
bidding and action phases, which actions change in place. The rest is shared with the state
before: the numbers, the options and colours, which no action changes, and the parts that
actions replace rather than change (the piles, the camels, the tables of routes, cities and
passages: engines.base.replace_item; the hands and what is known of them: `hands.own_list`),
as well as an open trade offer."""

from __future__ import annotations

from typing import Any

from engines.base import shallow_copy
from engines.types import State


def copy_for_apply(state: State) -> State:
    copy = shallow_copy(state)
    copy["gold"] = list(state["gold"])
    if "bidding" in state:
        copy["bidding"] = copy_bidding(state["bidding"])
    if "actions" in state:
        copy["actions"] = copy_actions(state["actions"])
    return copy


def copy_bidding(bidding: dict[str, Any]) -> dict[str, Any]:
    """The bidding phase: the items auctioned so far and the open auction's bidders."""
    auction = bidding["auction"]
    return {**bidding, "auctioned": list(bidding["auctioned"]),
            "auction": None if auction is None else {**auction, "in": list(auction["in"])}}


def copy_actions(actions: dict[str, Any]) -> dict[str, Any]:
    """The action phase: its counters and the offers made per seat."""
    return {**actions, "offers": list(actions["offers"])}
