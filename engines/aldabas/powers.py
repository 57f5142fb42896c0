"""Door Powers of the player's doors: which may be activated after a placement, and each
decision inside them (rulebook "Place One Door" and "The Doors")."""

from __future__ import annotations

from engines.base import log_event, replace_item
from engines.errors import IllegalAction
from engines.types import State

from .block import below, left_of, soldier_count, space
from .buying import buy_options
from .components import CARD_TYPE, kind
from .flow import finish_action, player, set_phase
from .table import Holder, draw, gain_coins

FISHER_DRAW = 2
SEAHORSE_COINS = 3


def start_powers(state: State, idx: int) -> None:
    """The new door's Power and those of the doors directly left of and below it."""
    block = player(state)["block"]
    sources = [
        source for source in (idx, left_of(idx), below(idx))
        if source is not None and (door := block[source]) is not None
        and CARD_TYPE[door].has_power
    ]
    state["pending_powers"] = sources
    power_done(state)


def power_done(state: State) -> None:
    """Back to the remaining Powers, or the placement action is over."""
    if state["pending_powers"]:
        set_phase(state, "powers")
    else:
        finish_action(state)


def skip_powers(state: State) -> None:
    log_event(state, "skip_powers", {"seat": state["active"],
                                     "skipped": [space(i) for i in state["pending_powers"]]})
    state["pending_powers"] = []
    power_done(state)


def activate(state: State, idx: int) -> None:
    """Resolve the Power of the door at `idx`; open a decision where it needs one."""
    holder = player(state)
    card = holder["block"][idx]
    if idx not in state["pending_powers"] or card is None:
        raise IllegalAction("that door's Power is not available: only the new door and the "
                            "doors directly left of and below it, each once")
    state["pending_powers"].remove(idx)
    log_event(state, "power", {"seat": state["active"], "space": space(idx),
                               "card": card})
    STARTERS[kind(card)](state, holder)


def start_soldier_coin(state: State, holder: Holder) -> None:
    moves = soldier_count(holder["block"])
    if holder["purse"] + holder["vault_coins"] == 0:
        power_done(state)
        return
    set_phase(state, "soldier", {"kind": "S1", "coins_left": moves})


def soldier_to_vault(state: State, holder: Holder) -> None:
    moved = min(holder["purse"], soldier_count(holder["block"]))
    holder["purse"] -= moved
    holder["vault_coins"] += moved
    log_event(state, "to_vault", {"seat": state["active"], "coins": moved})
    power_done(state)


def start_fishing(state: State, holder: Holder) -> None:
    drawn = [card for card in (draw(state) for _ in range(FISHER_DRAW)) if card is not None]
    if len(drawn) < FISHER_DRAW:
        holder["hand"].extend(drawn)
        log_event(state, "draw", {"seat": state["active"], "count": len(drawn)},
                  private={state["active"]: {"cards": drawn}})
        power_done(state)
        return
    set_phase(state, "keep", {"kind": "F1", "drawn": drawn})


def start_stealing(state: State, holder: Holder) -> None:
    set_phase(state, "steal", {"kind": "F2"})


def gain_three(state: State, holder: Holder) -> None:
    gain_coins(state, holder, SEAHORSE_COINS)
    log_event(state, "gain", {"seat": state["active"], "coins": SEAHORSE_COINS})
    power_done(state)


def start_clergy(state: State, holder: Holder) -> None:
    if holder["hand"]:
        set_phase(state, "clergy", {"kind": "C1"})
    else:
        power_done(state)


def start_builder(state: State, holder: Holder) -> None:
    if buy_options(state, holder, "builder_buy"):
        set_phase(state, "builder", {"kind": "B2B"})
    else:
        power_done(state)


STARTERS = {
    "S1": start_soldier_coin,
    "S2": soldier_to_vault,
    "F1": start_fishing,
    "F2": start_stealing,
    "F3": gain_three,
    "C1": start_clergy,
    "B2B": start_builder,
}


def move_soldier_coin(state: State, source: str, idx: int) -> None:
    """One coin from purse or vault onto a door of the block (+1 influence there)."""
    holder = player(state)
    if source == "purse":
        holder["purse"] -= 1
    else:
        holder["vault_coins"] -= 1
    holder["coins"][idx] += 1
    log_event(state, "coin_on_door", {"seat": state["active"], "space": space(idx)},
              private={state["active"]: {"source": source}})
    state["power"]["coins_left"] -= 1
    if state["power"]["coins_left"] == 0 or holder["purse"] + holder["vault_coins"] == 0:
        power_done(state)


def keep_drawn(state: State, card: int) -> None:
    drawn = state["power"]["drawn"]
    other = drawn[1 - drawn.index(card)]
    player(state)["hand"].append(card)
    state["discard"].append(other)
    log_event(state, "fish", {"seat": state["active"], "discarded": other},
              private={state["active"]: {"kept": card}})
    power_done(state)


def steal(state: State, victims: list[int]) -> None:
    """Two coins from one rival's purse, or one each from two rivals' purses. (Other seats'
    holdings are shared with the state before, engines.aldabas.copies: a robbed one is
    replaced, not changed.)"""
    thief = player(state)
    taken = []
    for victim in victims:
        robbed = state["players"][victim]
        if robbed["purse"] > 0:
            replace_item(state, "players", victim, {**robbed, "purse": robbed["purse"] - 1})
            thief["purse"] += 1
            taken.append(victim)
    log_event(state, "steal", {"seat": state["active"], "from": taken})
    power_done(state)


def hand_to_vault(state: State, card: int) -> None:
    holder = player(state)
    holder["hand"].remove(card)
    holder["vault_cards"].append(card)
    log_event(state, "door_to_vault", {"seat": state["active"]},
              private={state["active"]: {"card": card}})
    power_done(state)
