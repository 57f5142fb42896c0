"""The start of a turn and the bidding phase.

Clockwise from the Shah holder each player may open one auction on an item not yet
auctioned this turn. The opener bids any amount they can pay; then, clockwise, every
other player still in raises or passes for good, until one bidder is left, who takes the
item and pays the bank. Paying more than zero turns the camel face down: that player may
bid only 0 for the rest of the turn. A player who cannot raise (camel down, or not
enough gold) passes automatically; nobody bids on their own right of passage.
"""

from __future__ import annotations

from engines.base import Action, State, log_event
from engines.errors import IllegalAction

from .hands import receive_card

SPECIAL_ITEMS = ("shah", "eyes", "pirate_queen")


def start_turn(state: State) -> None:
    """Camels face up; the Shah holder reveals one card per player; bidding begins."""
    n = state["num_players"]
    state["turn"] += 1
    state["camel_up"] = [True] * n
    revealed = state["deck"][:n]
    del state["deck"][:n]
    state["face_up"] = revealed
    state["final_turn"] = not state["deck"]
    state["phase"] = "bidding"
    state["bidding"] = {
        "start": state["shah"], "opener": 0, "auctioned": [], "auction": None, "naming": None,
    }
    log_event(state, {"event": "turn", "turn": state["turn"], "shah": state["shah"],
                      "revealed": list(revealed), "deck": len(state["deck"])})


def opener_seat(state: State) -> int:
    bidding = state["bidding"]
    return (bidding["start"] + bidding["opener"]) % state["num_players"]


def bidding_current_seat(state: State) -> int:
    bidding = state["bidding"]
    if bidding["naming"] is not None:
        return bidding["naming"]
    if bidding["auction"] is not None:
        return bidding["auction"]["to_act"]
    return opener_seat(state)


def bidding_finished(state: State) -> bool:
    bidding = state["bidding"]
    return (bidding["naming"] is None and bidding["auction"] is None
            and bidding["opener"] >= state["num_players"])


def open_items(state: State, seat: int) -> list[str]:
    """Items `seat` may open an auction on, in a fixed order."""
    done = set(state["bidding"]["auctioned"])
    own = state["colours"][seat]
    items = [f"card:{card}" for card in state["face_up"]]
    items += [f"rop:{c}" for c in state["colours"] if state["rop"][c] is None and c != own]
    items += list(SPECIAL_ITEMS)
    return [item for item in items if item not in done]


def max_bid(state: State, seat: int) -> int:
    """The most `seat` may bid: their gold, or 0 once their camel is face down."""
    return state["gold"][seat] if state["camel_up"][seat] else 0


def bidding_legal_actions(state: State) -> list[Action]:
    bidding = state["bidding"]
    seat = bidding_current_seat(state)
    if bidding["naming"] is not None:
        return [{"type": "name_shah", "seat": s} for s in range(state["num_players"])]
    auction = bidding["auction"]
    if auction is not None:
        raises = range(auction["amount"] + 1, max_bid(state, seat) + 1)
        return [{"type": "bid", "amount": a} for a in raises] + [{"type": "pass"}]
    opens = [
        {"type": "open_auction", "item": item, "amount": amount}
        for item in open_items(state, seat)
        for amount in range(max_bid(state, seat) + 1)
    ]
    return opens + [{"type": "decline_auction"}]


def apply_bidding(state: State, action: Action) -> None:
    kind = action["type"]
    bidding = state["bidding"]
    expected = ("name_shah",) if bidding["naming"] is not None else (
        ("bid", "pass") if bidding["auction"] is not None else ("open_auction", "decline_auction")
    )
    if kind not in expected:
        raise IllegalAction(f'"{kind}" is not possible now; expected one of {", ".join(expected)}')
    {"name_shah": name_shah, "bid": raise_bid, "pass": pass_bid,
     "open_auction": open_auction, "decline_auction": decline_auction}[kind](state, action)


def decline_auction(state: State, _action: Action) -> None:
    log_event(state, {"event": "decline_auction", "seat": opener_seat(state)})
    next_opener(state)


def open_auction(state: State, action: Action) -> None:
    seat = opener_seat(state)
    item, amount = action["item"], action["amount"]
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
    log_event(state, {"event": "open_auction", "seat": seat, "item": item, "amount": amount})
    advance_auction(state, seat)


def excluded_seat(state: State, item: str) -> int | None:
    """The player whose own right of passage `item` is (they never bid on it)."""
    if not item.startswith("rop:"):
        return None
    return state["colours"].index(item[4:])


def check_amount(state: State, seat: int, amount: int, floor: int) -> None:
    if amount < floor:
        raise IllegalAction(f"the bid must be at least {floor}")
    if amount > state["gold"][seat]:
        raise IllegalAction(f"you cannot bid {amount}: you have {state['gold'][seat]} gold")
    if amount > 0 and not state["camel_up"][seat]:
        raise IllegalAction("your camel is face down (you paid gold this turn): you may bid only 0")


def raise_bid(state: State, action: Action) -> None:
    auction = state["bidding"]["auction"]
    seat = auction["to_act"]
    amount = action["amount"]
    check_amount(state, seat, amount, floor=auction["amount"] + 1)
    auction["high"], auction["amount"] = seat, amount
    log_event(state, {"event": "bid", "seat": seat, "amount": amount})
    advance_auction(state, seat)


def pass_bid(state: State, _action: Action) -> None:
    seat = state["bidding"]["auction"]["to_act"]
    drop_bidder(state, seat, automatic=False)
    advance_auction(state, seat)


def drop_bidder(state: State, seat: int, automatic: bool) -> None:
    state["bidding"]["auction"]["in"].remove(seat)
    event = {"event": "pass", "seat": seat}
    if automatic:
        event["automatic"] = True
    log_event(state, event)


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
        state["camel_up"][winner] = False
    log_event(state, {"event": "won", "seat": winner, "item": item, "paid": amount,
                      "camel_up": state["camel_up"][winner]})
    if item == "shah":
        bidding["naming"] = winner
        return
    give_item(state, winner, item)
    next_opener(state)


def give_item(state: State, seat: int, item: str) -> None:
    if item.startswith("card:"):
        card = int(item[5:])
        state["face_up"].remove(card)
        receive_card(state, seat, card)
    elif item.startswith("rop:"):
        state["rop"][item[4:]] = seat
    else:
        state[item] = seat


def name_shah(state: State, action: Action) -> None:
    seat = action["seat"]
    if seat >= state["num_players"]:
        raise IllegalAction(f"this game has seats 0 to {state['num_players'] - 1}")
    namer = state["bidding"]["naming"]
    state["shah"] = seat
    state["bidding"]["naming"] = None
    log_event(state, {"event": "name_shah", "seat": namer, "holder": seat})
    next_opener(state)


def next_opener(state: State) -> None:
    """The next player's chance to open an auction (there are always more items than
    players: one card per player plus the Shah, the Eyes and the Pirate Queen)."""
    state["bidding"]["opener"] += 1


def discard_unsold_cards(state: State) -> None:
    """Face-up cards nobody won are discarded."""
    if state["face_up"]:
        log_event(state, {"event": "discard_unsold", "cards": list(state["face_up"])})
    state["discard"].extend(state["face_up"])
    state["face_up"] = []
