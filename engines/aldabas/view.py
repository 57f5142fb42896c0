"""What a seat may see (rulebook "Your Vault & Your Purse"), and the proof that nothing
else leaks: `hidden_variant` re-deals everything the seat can not see."""

from __future__ import annotations

from engines.base import State, clone
from engines.rng import Rng

from .block import space
from .table import dock_view

SECRET_COIN_SPREAD = 3


def block_view(holder: dict) -> list[dict]:
    return [
        {"space": space(i), "card": card, "coins": holder["coins"][i]}
        for i, card in enumerate(holder["block"])
        if card is not None
    ]


def public_player(seat: int, holder: dict) -> dict:
    return {
        "seat": seat,
        "purse": holder["purse"],
        "hand_size": len(holder["hand"]),
        "vault_card_count": len(holder["vault_cards"]),
        "block": block_view(holder),
    }


def power_view(state: State, seat: int | None) -> dict | None:
    """The open power decision; the two drawn doors only for the one who drew them."""
    power = state["power"]
    if power is None:
        return None
    if "drawn" in power and state["active"] != seat:
        return {"kind": power["kind"], "drawn_count": len(power["drawn"])}
    return clone(power)


def rival_view(rival: dict) -> dict:
    return {
        "goals": list(rival["goals"]),
        "hand": list(rival["hand"]),
        "vault_coins": rival["vault_coins"],
        "vault_card_count": len(rival["vault_cards"]),
        "block": block_view(rival),
    }


def seat_view(state: State, seat: int | None) -> dict:
    """A seat's view; a spectator (`seat=None`) has no `you` part."""
    view = {
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
        "ending": clone(state["ending"]),
        "players": [public_player(n, p) for n, p in enumerate(state["players"])],
        "you": None if seat is None else own_view(state["players"][seat]),
    }
    if state["rival"] is not None:
        view["rival"] = rival_view(state["rival"])
    return view


def own_view(own: dict) -> dict:
    """A player's secrets, shown to that player only."""
    return {
        "hand": list(own["hand"]),
        "vault_cards": list(own["vault_cards"]),
        "vault_coins": own["vault_coins"],
    }


def hidden_variant(state: State, seat: int, rng: Rng) -> State:
    """Shuffle the deck with every card `seat` can not see and deal them back in place;
    give the other vaults new secret coin counts and the generator a new state."""
    variant = clone(state)
    pockets = [variant["deck"]]
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
