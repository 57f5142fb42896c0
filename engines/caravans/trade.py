"""Trade offers: an open action kind (its shape is in the action schema), answered at once by
the other player.

An offer names what the offerer gives (gold, card ids from their hand, rights of passage,
the Eyes of Shamesh, the Pirate Queen, the Favor of the Shah) and what they want in
return (the same kinds, cards named by city type since the offerer cannot see the other
hand). Nobody may hand a player that player's own right of passage; routes and cities are
never traded; at most three offers per player per action phase.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict

from engines.base import clone, log_event, replace_item
from engines.errors import IllegalAction
from engines.types import State

from .components import CARDS, MAX_OFFERS_PER_PHASE
from .hands import own_list, receive_card, take_from_hand

TOKENS = ("eyes", "pirate_queen", "shah")
Bundle = dict[str, Any]
"""One side of an offer with every key: gold, cards (given) or card_types (asked for),
passages, and a boolean per token."""


class GiveBundle(TypedDict, total=False):
    gold: int
    cards: list[int]
    passages: list[str]
    eyes: bool
    pirate_queen: bool
    shah: bool


class TakeBundle(TypedDict, total=False):
    gold: int
    card_types: list[str]
    passages: list[str]
    eyes: bool
    pirate_queen: bool
    shah: bool


class OfferAction(TypedDict):
    type: Literal["offer_trade"]
    to: int
    give: NotRequired[GiveBundle]
    take: NotRequired[TakeBundle]


def canonical_offers(state: State, seat: int) -> list[OfferAction]:
    """The offers legal_actions lists: your lowest card for 1 gold, to each other player."""
    hand = state["hands"][seat]
    if state["actions"]["offers"][seat] >= MAX_OFFERS_PER_PHASE or not hand:
        return []
    return [
        {"type": "offer_trade", "to": other, "give": {"cards": [min(hand)]}, "take": {"gold": 1}}
        for other in range(state["num_players"])
        if other != seat and state["gold"][other] >= 1
    ]


def apply_offer(state: State, seat: int, action: OfferAction) -> None:
    to = action["to"]
    if to >= state["num_players"] or to == seat:
        raise IllegalAction("an offer goes to another player's seat")
    if state["actions"]["offers"][seat] >= MAX_OFFERS_PER_PHASE:
        raise IllegalAction(f"at most {MAX_OFFERS_PER_PHASE} offers per player per action phase")
    give = full_bundle(action.get("give", {}), "cards")
    take = full_bundle(action.get("take", {}), "card_types")
    if is_empty(give) and is_empty(take):
        raise IllegalAction("an offer must give or ask for something")
    check_can_give(state, seat, to, give)
    check_can_ask(state, seat, to, take)
    state["actions"]["offers"][seat] += 1
    state["actions"]["offer"] = {"from": seat, "to": to, "give": give, "take": take}
    known = own_list(state, "known", seat)
    for card in give["cards"]:
        if card not in known:
            known.append(card)
    log_event(state, "offer", {"seat": seat, "to": to, "give": clone(give),
                               "take": clone(take)})


def full_bundle(raw: Mapping[str, Any], card_key: str) -> Bundle:
    """One side of a canonical offer with every key: an absent key gives or asks nothing."""
    return {
        "gold": raw.get("gold", 0),
        card_key: list(raw.get(card_key, [])),
        "passages": list(raw.get("passages", [])),
        **{token: raw.get(token, False) for token in TOKENS},
    }


def is_empty(bundle: Bundle) -> bool:
    return not any(bundle.values())


def check_can_give(state: State, seat: int, to: int, give: Bundle) -> None:
    """Only what the offerer holds, and never the receiver's own right of passage."""
    check_tokens_and_gold(state, seat, give, "you")
    missing = [c for c in give["cards"] if c not in state["hands"][seat]]
    if missing:
        raise IllegalAction(f"you do not hold the card(s) {missing}")
    check_passages(state, seat, to, give["passages"], "you")


def check_can_ask(state: State, seat: int, to: int, take: Bundle) -> None:
    """Only what the other player holds (as far as you can see), never your own passage."""
    check_tokens_and_gold(state, to, take, f"seat {to}")
    if len(take["card_types"]) > len(state["hands"][to]):
        raise IllegalAction(f"seat {to} holds only {len(state['hands'][to])} card(s)")
    check_passages(state, to, seat, take["passages"], f"seat {to}")


def check_tokens_and_gold(state: State, holder: int, bundle: Bundle, who: str) -> None:
    if bundle["gold"] > state["gold"][holder]:
        raise IllegalAction(f"{who} hold(s) only {state['gold'][holder]} gold")
    for token in TOKENS:
        if bundle[token] and state[token] != holder:
            raise IllegalAction(f"{who} do(es) not hold the {token}")


def check_passages(state: State, holder: int, receiver: int, passages: list[str], who: str
                   ) -> None:
    for colour in passages:
        if colour not in state["rop"]:
            raise IllegalAction(f"the {colour} map and its right of passage are not in this game")
        if state["rop"][colour] != holder:
            raise IllegalAction(f"{who} do(es) not hold the {colour} right of passage")
        if colour == state["colours"][receiver]:
            raise IllegalAction("nobody may hand a player that player's own right of passage")


def cards_for_types(hand: list[int], types: list[str]) -> list[int] | None:
    """The lowest-id cards of `hand` covering `types`, or None when the hand lacks one."""
    chosen: list[int] = []
    for city_type, count in Counter(types).items():
        matching = sorted(c for c in hand if CARDS[c]["type"] == city_type)
        if len(matching) < count:
            return None
        chosen += matching[:count]
    return sorted(chosen)


def can_accept(state: State) -> bool:
    """The player the offer is made to holds the cards it asks for."""
    offer = state["actions"]["offer"]
    return cards_for_types(state["hands"][offer["to"]], offer["take"]["card_types"]) is not None


def decline(state: State) -> None:
    offer = state["actions"]["offer"]
    state["actions"]["offer"] = None
    log_event(state, "decline_trade", {"seat": offer["to"]})


def accept(state: State) -> None:
    offer = state["actions"]["offer"]
    state["actions"]["offer"] = None
    requested = cards_for_types(state["hands"][offer["to"]], offer["take"]["card_types"])
    if requested is None:
        raise IllegalAction("you do not hold the cards asked for")
    hand_over(state, offer["from"], offer["to"], offer["give"], offer["give"]["cards"])
    hand_over(state, offer["to"], offer["from"], offer["take"], requested)
    state["actions"]["acted"] = True
    log_event(state, "accept_trade", {"seat": offer["to"], "cards_given": requested})


def hand_over(state: State, giver: int, receiver: int, bundle: Bundle, cards: list[int]
              ) -> None:
    state["gold"][giver] -= bundle["gold"]
    state["gold"][receiver] += bundle["gold"]
    for card in cards:
        take_from_hand(state, giver, card)
        receive_card(state, receiver, card)
    for colour in bundle["passages"]:
        replace_item(state, "rop", colour, receiver)
    for token in TOKENS:
        if bundle[token]:
            state[token] = receiver
