"""What a seat may see (rulebook "Your Vault & Your Purse"), and the proof that nothing
else leaks: `hidden_variant` re-deals everything the seat can not see."""

from __future__ import annotations

from functools import partial
from typing import Any, NotRequired, TypedDict, cast

import orjson

from engines.base import clone
from engines.rng import Rng
from engines.types import End, State
from engines.view_memo import Memo

from .block import space
from .table import DockSlot, Holder, RivalHolder, dock_view

SECRET_COIN_SPREAD = 3


class Door(TypedDict):
    space: list[int]
    card: int
    coins: int


class PublicPlayer(TypedDict):
    seat: int
    purse: int
    hand_size: int
    vault_card_count: int
    block: list[Door]


class Secrets(TypedDict):
    hand: list[int]
    vault_cards: list[int]
    vault_coins: int


class RivalView(TypedDict):
    goals: list[int]
    hand: list[int]
    vault_coins: int
    vault_card_count: int
    block: list[Door]


def block_view(holder: Holder) -> list[Door]:
    return [
        {"space": space(i), "card": card, "coins": holder["coins"][i]}
        for i, card in enumerate(holder["block"])
        if card is not None
    ]


def public_player(seat: int, holder: Holder) -> PublicPlayer:
    return {
        "seat": seat,
        "purse": holder["purse"],
        "hand_size": len(holder["hand"]),
        "vault_card_count": len(holder["vault_cards"]),
        "block": block_view(holder),
    }


def power_view(state: State, seat: int | None) -> dict[str, Any] | None:
    """The open power decision; the two drawn doors only for the one who drew them."""
    power = state["power"]
    if power is None:
        return None
    if "drawn" in power and state["active"] != seat:
        return {"kind": power["kind"], "drawn_count": len(power["drawn"])}
    shown: dict[str, Any] = clone(power)
    return shown


def rival_view(rival: RivalHolder) -> RivalView:
    return {
        "goals": list(rival["goals"]),
        "hand": list(rival["hand"]),
        "vault_coins": rival["vault_coins"],
        "vault_card_count": len(rival["vault_cards"]),
        "block": block_view(rival),
    }


class View(TypedDict):
    mode: str
    phase: str
    active: int | str | None
    turn: int
    actions_left: int
    pending_powers: list[list[int]]
    power: dict[str, Any] | None
    """S1 {kind, coins_left}, F1 {kind, drawn} (or drawn_count), F2, C1, B2B {kind}."""
    supply: int
    box_used: int
    deck_count: int
    discard: list[int]
    dock: list[DockSlot]
    end_trigger: End | None
    players: list[PublicPlayer]
    you: Secrets | None
    rival: NotRequired[RivalView]


def seat_view(state: State, seat: int | None) -> View:
    """A seat's view; a spectator (`seat=None`) has no `you` part."""
    view = seat_view_with(state, seat, [public_player(n, p)
                                        for n, p in enumerate(state["players"])])
    if seat is not None:
        view["you"] = own_view(state["players"][seat])
    if state["rival"] is not None:
        view["rival"] = rival_view(state["rival"])
    return view


def seat_view_with(state: State, seat: int | None, players: Any) -> View:
    """The view around its players' public parts (as dicts, or as JSON fragments); the
    seat's secrets and the Rival are the caller's to fill in."""
    return {
        "mode": state["mode"],
        "phase": state["phase"],
        "active": state["active"],
        "turn": state["turn_number"],
        "actions_left": state["actions_left"],
        "pending_powers": [space(i) for i in state["pending_powers"]],
        "power": power_view(state, seat),
        "supply": state["supply"],
        "box_used": state["box_used"],
        "deck_count": len(state["deck"]),
        "discard": list(state["discard"]),
        "dock": dock_view(state),
        "end_trigger": clone(state["end_trigger"]),
        "players": players,
        "you": None,
    }


def view_parts(state: State, seat: int | None, memo: Memo) -> dict[str, Any]:
    """`seat_view`, each holder's part as JSON kept in `memo` by the holder it shows
    (engines.observation_json): an action changes the holdings of the seat to act only."""
    players = state["players"]
    view = cast(dict[str, Any], seat_view_with(state, seat, [
        orjson.Fragment(memo.json(n, holder, partial(public_player, n, holder)))
        for n, holder in enumerate(players)]))
    if seat is not None:
        view["you"] = orjson.Fragment(memo.json(("you", seat), players[seat],
                                                partial(own_view, players[seat])))
    rival = state["rival"]
    if rival is not None:
        view["rival"] = orjson.Fragment(memo.json("rival", rival, partial(rival_view, rival)))
    return view


def own_view(own: Holder) -> Secrets:
    """A player's secrets, shown to that player only."""
    return {
        "hand": list(own["hand"]),
        "vault_cards": list(own["vault_cards"]),
        "vault_coins": own["vault_coins"],
    }


def hidden_variant(state: State, seat: int, rng: Rng) -> State:
    """Shuffle the deck with every card `seat` can not see and deal them back in place;
    give the other vaults new secret coin counts and the generator a new state."""
    variant: State = clone(state)
    pockets: list[list[int]] = [variant["deck"]]
    for n, holder in enumerate(variant["players"]):
        if n != seat:
            pockets += [holder["hand"], holder["vault_cards"]]
            holder["vault_coins"] = rng.below(holder["vault_coins"] + SECRET_COIN_SPREAD)
    if variant["rival"] is not None:
        pockets.append(variant["rival"]["vault_cards"])
    power = variant["power"]
    if power is not None and "drawn" in power and variant["active"] != seat:
        pockets.append(power["drawn"])
    pool = [card for pocket in pockets for card in pocket]
    rng.shuffle(pool)
    for pocket in pockets:
        size = len(pocket)
        pocket[:], pool = pool[:size], pool[size:]
    variant["rng"] = rng.next64()
    return variant
