"""The bidding phase: auctions of the face-up cards, the banked rights of passage, the
Favor of the Shah, the Eyes of Shamesh and the Pirate Queen.

Clockwise from the Shah holder each player may open one auction on an item not yet
auctioned this turn. The opener bids any amount they can pay; then, clockwise, every
other player still in raises or passes for good, until one bidder is left, who takes the
item and pays the bank. Paying more than zero turns the camel face down: that player may
bid only 0 for the rest of the turn. A player who cannot raise (camel down, or not
enough gold) passes automatically; nobody bids on their own right of passage.
"""

from __future__ import annotations

from engines.base import log_event, replace_item
from engines.errors import IllegalAction
from engines.types import Event, State

from .hands import receive_card

SPECIAL_ITEMS = ("shah", "eyes", "pirate_queen")


def opener_seat(state: State) -> int:
    bidding = state["bidding"]
    seat: int = (bidding["start"] + bidding["opener"]) % state["num_players"]
    return seat


def current_seat(state: State) -> int:
    bidding = state["bidding"]
    seat: int
    if bidding["naming"] is not None:
        seat = bidding["naming"]
    elif bidding["auction"] is not None:
        seat = bidding["auction"]["to_act"]
    else:
        seat = opener_seat(state)
    return seat


def finished(state: State) -> bool:
    bidding = state["bidding"]
    return bool(bidding["naming"] is None and bidding["auction"] is None
                and bidding["opener"] >= state["num_players"])


def open_items(state: State, seat: int) -> list[str]:
    """Items `seat` may open an auction on, in a fixed order."""
    own = state["colours"][seat]
    items = [f"card:{card}" for card in state["face_up"]]
    for colour in state["colours"]:
        if state["rop"][colour] is None and colour != own:
            items.append(f"rop:{colour}")
    items += SPECIAL_ITEMS
    done = state["bidding"]["auctioned"]
    return [item for item in items if item not in done]


def max_bid(state: State, seat: int) -> int:
    """The most `seat` may bid: their gold, or 0 once their camel is face down."""
    gold: int = state["gold"][seat] if state["camel_up"][seat] else 0
    return gold


def decline(state: State) -> None:
    log_event(state, "decline_auction", {"seat": opener_seat(state)})
    next_opener(state)


def open_auction(state: State, item: str, amount: int) -> None:
    seat = opener_seat(state)
    if item not in open_items(state, seat):
        raise IllegalAction(f"item {item!r} cannot be auctioned now (each item once per turn; "
                            "never your own right of passage; only face-up cards and banked "
                            "rights of passage)")
    check_amount(state, seat, amount, floor=0)
    state["bidding"]["auctioned"].append(item)
    own_rop_holder = excluded_seat(state, item)
    bidders = [s for s in range(state["num_players"]) if s != own_rop_holder]
    state["bidding"]["auction"] = {"item": item, "high": seat, "amount": amount,
                                   "in": bidders, "to_act": seat}
    log_event(state, "open_auction", {"seat": seat, "item": item, "amount": amount})
    advance_auction(state, seat)


def excluded_seat(state: State, item: str) -> int | None:
    """The player whose own right of passage `item` is (they never bid on it)."""
    if not item.startswith("rop:"):
        return None
    seat: int = state["colours"].index(item[4:])
    return seat


def check_amount(state: State, seat: int, amount: int, floor: int) -> None:
    if amount < floor:
        raise IllegalAction(f"the bid must be at least {floor}")
    if amount > state["gold"][seat]:
        raise IllegalAction(f"you cannot bid {amount}: you have {state['gold'][seat]} gold")
    if amount > 0 and not state["camel_up"][seat]:
        raise IllegalAction("your camel is face down (you paid gold this turn): you may bid only 0")


def raise_bid(state: State, amount: int) -> None:
    auction = state["bidding"]["auction"]
    seat = auction["to_act"]
    check_amount(state, seat, amount, floor=auction["amount"] + 1)
    auction["high"], auction["amount"] = seat, amount
    log_event(state, "bid", {"seat": seat, "amount": amount})
    advance_auction(state, seat)


def pass_bid(state: State) -> None:
    seat = state["bidding"]["auction"]["to_act"]
    drop_bidder(state, seat, automatic=False)
    advance_auction(state, seat)


def drop_bidder(state: State, seat: int, automatic: bool) -> None:
    state["bidding"]["auction"]["in"].remove(seat)
    fields: Event = {"seat": seat}
    if automatic:
        fields["automatic"] = True
    log_event(state, "pass", fields)


def advance_auction(state: State, after: int) -> None:
    """Hand the auction to the next player able to raise; sell the item when none is left."""
    auction = state["bidding"]["auction"]
    n = state["num_players"]
    seat = after
    for _ in range(2 * n):
        seat = (seat + 1) % n
        if seat == auction["high"] and len(auction["in"]) == 1:
            break
        if seat == auction["high"] or seat not in auction["in"]:
            continue
        if max_bid(state, seat) > auction["amount"]:
            auction["to_act"] = seat
            return
        drop_bidder(state, seat, automatic=True)
    sell_item(state)


def sell_item(state: State) -> None:
    """The last bidder pays the bank and takes the item (the Shah's winner names a holder)."""
    bidding = state["bidding"]
    auction = bidding["auction"]
    bidding["auction"] = None
    winner, amount, item = auction["high"], auction["amount"], auction["item"]
    state["gold"][winner] -= amount
    if amount > 0:
        replace_item(state, "camel_up", winner, False)
    log_event(state, "won", {"seat": winner, "item": item, "paid": amount,
                             "camel_up": state["camel_up"][winner]})
    if item == "shah":
        bidding["naming"] = winner
        return
    give_item(state, winner, item)
    next_opener(state)


def give_item(state: State, seat: int, item: str) -> None:
    if item.startswith("card:"):
        card = int(item[5:])
        face_up = list(state["face_up"])
        face_up.remove(card)
        state["face_up"] = face_up
        receive_card(state, seat, card)
    elif item.startswith("rop:"):
        replace_item(state, "rop", item[4:], seat)
    else:
        state[item] = seat


def name_shah(state: State, seat: int) -> None:
    if seat >= state["num_players"]:
        raise IllegalAction(f"this game has seats 0 to {state['num_players'] - 1}")
    namer = state["bidding"]["naming"]
    state["shah"] = seat
    state["bidding"]["naming"] = None
    log_event(state, "name_shah", {"seat": namer, "holder": seat})
    next_opener(state)


def next_opener(state: State) -> None:
    """The next player's chance to open an auction (there are always more items than
    players: one card per player plus the Shah, the Eyes and the Pirate Queen)."""
    state["bidding"]["opener"] += 1


def discard_unsold_cards(state: State) -> None:
    """Face-up cards nobody won are discarded."""
    if state["face_up"]:
        log_event(state, "discard_unsold", {"cards": list(state["face_up"])})
    state["discard"] = state["discard"] + state["face_up"]
    state["face_up"] = []
