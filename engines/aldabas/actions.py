"""Every decision a seat can take, phase by phase: its legal actions and its handler.

`withdraw` is free at any point of the mover's own turn, so every turn phase accepts it
(listed after the phase's own actions).
"""

from __future__ import annotations

from typing import Literal, TypedDict

from engines.base import log_event
from engines.errors import IllegalAction
from engines.phases import Move, Phase, Phases
from engines.rng import Rng
from engines.types import State

from . import flow
from .block import (
    colour_reason,
    door_spaces,
    index,
    is_full,
    neighbour_colours,
    open_space_reason,
    open_spaces,
    space,
)
from .buying import BuyAction, buy, buy_options
from .components import CARD_COLOUR
from .flow import HAND_LIMIT, finish_action, finish_setup, pass_turn, player, set_phase
from .powers import (
    activate,
    hand_to_vault,
    keep_drawn,
    move_soldier_coin,
    power_done,
    skip_powers,
    start_powers,
    steal,
)
from .table import Holder, gain_coins, trigger_end

TAKE_COINS = 2


class NoFields(TypedDict):
    """`setup_done`, `take_coins`, `end_powers`: a type and nothing else."""

    type: Literal["setup_done", "take_coins", "end_powers"]


class CardAction(TypedDict):
    """`setup_vault`, `setup_discard`, `keep`, `to_vault`, `discard`: a door of yours."""

    type: Literal["setup_vault", "setup_discard", "keep", "to_vault", "discard"]
    card: int


class PlaceAction(TypedDict):
    type: Literal["place"]
    card: int
    space: list[int]


class WithdrawAction(TypedDict):
    type: Literal["withdraw"]
    coins: int


class PowerAction(TypedDict):
    type: Literal["power"]
    space: list[int]


class SoldierCoinAction(TypedDict):
    type: Literal["soldier_coin"]
    source: Literal["purse", "vault"]
    space: list[int]


StealAction = TypedDict("StealAction", {"type": Literal["steal"], "from": list[int]})


# ----- reading fields ------------------------------------------------------------------
def card_in(action: CardAction | PlaceAction, cards: list[int], where: str) -> int:
    card = action["card"]
    if card not in cards:
        raise IllegalAction(f"card {card} is not {where}")
    return card


def space_field(action: PlaceAction | PowerAction | SoldierCoinAction) -> int:
    col, row = action["space"]
    return index(col, row)


def discard_from_hand(state: State, action: CardAction) -> int:
    """Move the action's card from the active player's hand onto the discard pile."""
    hand = player(state)["hand"]
    card = card_in(action, hand, "in your hand")
    hand.remove(card)
    state["discard"].append(card)
    return card


# ----- setup -----------------------------------------------------------------------------
def legal_setup_vault(state: State) -> list[CardAction]:
    return [{"type": "setup_vault", "card": card} for card in player(state)["hand"]]


def do_setup_vault(state: State, action: CardAction, rng: Rng) -> None:
    holder = player(state)
    card = card_in(action, holder["hand"], "in your hand")
    holder["hand"].remove(card)
    holder["vault_cards"].append(card)
    log_event(state, "setup_vault", {"seat": state["active"]},
              private={state["active"]: {"card": card}})
    set_phase(state, flow.SETUP_DISCARD)


def legal_setup_done(state: State) -> list[NoFields]:
    return [{"type": "setup_done"}]


def do_setup_done(state: State, action: NoFields, rng: Rng) -> None:
    finish_setup(state)


def legal_setup_discard(state: State) -> list[CardAction]:
    return [{"type": "setup_discard", "card": card} for card in player(state)["hand"]]


def do_setup_discard(state: State, action: CardAction, rng: Rng) -> None:
    card = discard_from_hand(state, action)
    gain_coins(state, player(state), 1)
    log_event(state, "setup_discard", {"seat": state["active"], "card": card})


# ----- the three actions and the free vault move ------------------------------------------
def legal_take_coins(state: State) -> list[NoFields]:
    return [{"type": "take_coins"}]


def do_take_coins(state: State, action: NoFields, rng: Rng) -> None:
    gain_coins(state, player(state), TAKE_COINS)
    log_event(state, "take_coins", {"seat": state["active"], "coins": TAKE_COINS})
    finish_action(state)


def legal_buys(state: State) -> list[BuyAction]:
    return buy_options(state, player(state), "buy")


def do_buy(state: State, action: BuyAction, rng: Rng) -> None:
    buy(state, state["active"], action["slot"], action["from_vault"])
    finish_action(state)


def legal_places(state: State) -> list[PlaceAction]:
    holder = player(state)
    block = holder["block"]
    spaces = [(idx, neighbour_colours(block, idx)) for idx in open_spaces(block)]
    return [
        {"type": "place", "card": card, "space": space(idx)}
        for card in holder["hand"]
        for idx, refused in spaces
        if CARD_COLOUR[card] not in refused
    ]


def do_place(state: State, action: PlaceAction, rng: Rng) -> None:
    holder = player(state)
    card = card_in(action, holder["hand"], "in your hand")
    idx = space_field(action)
    reason = open_space_reason(holder["block"], idx) or colour_reason(holder["block"], idx, card)
    if reason:
        raise IllegalAction(f"you can not place there: {reason}")
    holder["hand"].remove(card)
    holder["block"][idx] = card
    log_event(state, "place", {"seat": state["active"], "card": card, "space": space(idx)})
    if is_full(holder["block"]):
        trigger_end(state, "block_full")
    start_powers(state, idx)


def legal_withdraws(state: State) -> list[WithdrawAction]:
    """Free at any point of your own turn (shared/rules/aldabas.md): 1 to all vault coins."""
    return [{"type": "withdraw", "coins": n}
            for n in range(1, player(state)["vault_coins"] + 1)]


def do_withdraw(state: State, action: WithdrawAction, rng: Rng) -> None:
    holder = player(state)
    coins = action["coins"]
    if not 1 <= coins <= holder["vault_coins"]:
        raise IllegalAction(f"you can move 1 to {holder['vault_coins']} coins out of your "
                            f"vault, not {coins}")
    holder["vault_coins"] -= coins
    holder["purse"] += coins
    log_event(state, "withdraw", {"seat": state["active"], "coins": coins})


# ----- powers ----------------------------------------------------------------------------
def legal_powers(state: State) -> list[PowerAction]:
    return [{"type": "power", "space": space(idx)} for idx in state["pending_powers"]]


def do_power(state: State, action: PowerAction, rng: Rng) -> None:
    activate(state, space_field(action))


def legal_end_powers(state: State) -> list[NoFields]:
    return [{"type": "end_powers"}]


def do_end_powers(state: State, action: NoFields, rng: Rng) -> None:
    skip_powers(state)


def coin_sources(holder: Holder) -> list[Literal["purse", "vault"]]:
    sources: list[tuple[Literal["purse", "vault"], int]] = [
        ("purse", holder["purse"]), ("vault", holder["vault_coins"])]
    return [name for name, count in sources if count > 0]


def legal_soldier(state: State) -> list[SoldierCoinAction]:
    holder = player(state)
    return [
        {"type": "soldier_coin", "source": source, "space": space(idx)}
        for source in coin_sources(holder)
        for idx in door_spaces(holder["block"])
    ]


def do_soldier_coin(state: State, action: SoldierCoinAction, rng: Rng) -> None:
    holder = player(state)
    source = action["source"]
    if source not in coin_sources(holder):
        raise IllegalAction(f"your {source} holds no coin to move")
    idx = space_field(action)
    if idx not in door_spaces(holder["block"]):
        raise IllegalAction("a Soldier moves the coin onto a Door in your block: that space "
                            "holds no door")
    move_soldier_coin(state, source, idx)


def legal_keep(state: State) -> list[CardAction]:
    return [{"type": "keep", "card": card} for card in state["power"]["drawn"]]


def do_keep(state: State, action: CardAction, rng: Rng) -> None:
    keep_drawn(state, card_in(action, state["power"]["drawn"], "one of the two drawn doors"))


def opponents(state: State) -> list[int]:
    return [seat for seat in range(state["num_players"]) if seat != state["active"]]


def legal_steal(state: State) -> list[StealAction]:
    others = opponents(state)
    return [
        {"type": "steal", "from": [a, b]}
        for i, a in enumerate(others)
        for b in others[i:]
    ]


def do_steal(state: State, action: StealAction, rng: Rng) -> None:
    victims = action["from"]
    if any(v not in opponents(state) for v in victims):
        raise IllegalAction("you steal only from rivals' purses: name two other seats")
    steal(state, sorted(victims))


def legal_clergy(state: State) -> list[CardAction]:
    return [{"type": "to_vault", "card": card} for card in player(state)["hand"]]


def do_to_vault(state: State, action: CardAction, rng: Rng) -> None:
    hand_to_vault(state, card_in(action, player(state)["hand"], "in your hand"))


def legal_builder(state: State) -> list[BuyAction]:
    return buy_options(state, player(state), "builder_buy")


def do_builder_buy(state: State, action: BuyAction, rng: Rng) -> None:
    buy(state, state["active"], action["slot"], action["from_vault"])
    power_done(state)


# ----- end of turn -----------------------------------------------------------------------
def legal_hand_limit(state: State) -> list[CardAction]:
    return [{"type": "discard", "card": card} for card in player(state)["hand"]]


def do_discard(state: State, action: CardAction, rng: Rng) -> None:
    card = discard_from_hand(state, action)
    log_event(state, "discard", {"seat": state["active"], "card": card})
    if len(player(state)["hand"]) <= HAND_LIMIT:
        pass_turn(state)


WITHDRAW = Move(legal_withdraws, do_withdraw)
TURN_PHASES: dict[str, Phase] = {
    flow.ACTIONS: {"take_coins": Move(legal_take_coins, do_take_coins),
                   "buy": Move(legal_buys, do_buy), "place": Move(legal_places, do_place)},
    flow.POWERS: {"power": Move(legal_powers, do_power),
                  "end_powers": Move(legal_end_powers, do_end_powers)},
    "soldier": {"soldier_coin": Move(legal_soldier, do_soldier_coin)},
    "keep": {"keep": Move(legal_keep, do_keep)},
    "steal": {"steal": Move(legal_steal, do_steal)},
    "clergy": {"to_vault": Move(legal_clergy, do_to_vault)},
    "builder": {"builder_buy": Move(legal_builder, do_builder_buy)},
    flow.HAND_LIMIT_PHASE: {"discard": Move(legal_hand_limit, do_discard)},
}
PHASES = Phases({
    flow.SETUP_VAULT: {"setup_vault": Move(legal_setup_vault, do_setup_vault)},
    flow.SETUP_DISCARD: {"setup_done": Move(legal_setup_done, do_setup_done),
                         "setup_discard": Move(legal_setup_discard, do_setup_discard)},
    **{name: {**moves, "withdraw": WITHDRAW} for name, moves in TURN_PHASES.items()},
})
