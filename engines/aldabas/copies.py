"""How `apply` copies an Aldabas state (engines.base.Rules._copy_for_apply): the piles, the
Dock, the pending Powers, the holdings of the seat to act and the current Power's counters,
which actions change in place. The rest is shared with the state before: the numbers, the
options, the Dock's costs, a Power's drawn doors, the end trigger (never changed once set),
the other seats' holdings (a Fisher who robs one replaces it, `powers.steal`) and the
Rival's (its turn copies them, `rival.rival_turn`)."""

from __future__ import annotations

from engines.base import shallow_copy
from engines.types import State

from .table import Holder


def copy_for_apply(state: State) -> State:
    copy = shallow_copy(state)
    copy["deck"] = list(state["deck"])
    copy["discard"] = list(state["discard"])
    copy["dock"] = list(state["dock"])
    copy["pending_powers"] = list(state["pending_powers"])
    players = copy["players"] = list(state["players"])
    players[state["active"]] = copy_holder(players[state["active"]])
    if state["power"] is not None:
        copy["power"] = dict(state["power"])  # a Soldier counts its coins down in place
    return copy


def copy_holder(holder: Holder) -> Holder:
    """A player's or the Rival's holdings, its lists copied (the Rival's goals shared)."""
    return {**holder, "hand": list(holder["hand"]), "vault_cards": list(holder["vault_cards"]),
            "block": list(holder["block"]), "coins": list(holder["coins"])}
