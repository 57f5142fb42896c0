"""Every decision a seat can take, phase by phase: its legal list and its handler.

Each phase names the action types it accepts; `legal(state)` lists them in a fixed order
and `apply_action` resolves a canonical action (its shape is checked against the action
schema before), raising IllegalAction (with the rule) for one the rules forbid now.
`withdraw` is free at any point of the mover's own turn, so every turn phase accepts it.
"""

from __future__ import annotations

from collections.abc import Callable

from engines.base import Action, State, log_event
from engines.errors import IllegalAction

from .block import (
    colour_reason,
    index,
    is_full,
    open_space_reason,
    open_spaces,
    space,
)
from .buying import buy, buy_options
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
from .table import gain_coins, trigger_end

TAKE_COINS = 2


# ----- reading fields ------------------------------------------------------------------
def card_in(action: Action, cards: list[int], where: str) -> int:
    card = action["card"]
    if card not in cards:
        raise IllegalAction(f"card {card} is not {where}")
    return card


def space_field(action: Action) -> int:
    col, row = action["space"]
    return index(col, row)


# ----- setup -----------------------------------------------------------------------------
def legal_setup_vault(state: State) -> list[Action]:
    return [{"type": "setup_vault", "card": card} for card in player(state)["hand"]]


def do_setup_vault(state: State, action: Action) -> None:
    holder = player(state)
    card = card_in(action, holder["hand"], "in your hand")
    holder["hand"].remove(card)
    holder["vault_cards"].append(card)
    log_event(state, {"event": "setup_vault", "seat": state["active"]},
              private={state["active"]: {"card": card}})
    set_phase(state, "setup_discard")


def legal_setup_discard(state: State) -> list[Action]:
    discards = [{"type": "setup_discard", "card": card} for card in player(state)["hand"]]
    return [{"type": "setup_done"}, *discards]


def discard_from_hand(state: State, action: Action) -> int:
    """Move the action's card from the active player's hand onto the discard pile."""
    hand = player(state)["hand"]
    card = card_in(action, hand, "in your hand")
    hand.remove(card)
    state["discard"].append(card)
    return card


def do_setup_discard(state: State, action: Action) -> None:
    card = discard_from_hand(state, action)
    gain_coins(state, player(state), 1)
    log_event(state, {"event": "setup_discard", "seat": state["active"], "card": card})


def do_setup_done(state: State, action: Action) -> None:
    finish_setup(state)


# ----- the three actions and the free vault move ------------------------------------------
def legal_actions_phase(state: State) -> list[Action]:
    holder = player(state)
    spaces = open_spaces(holder["block"])
    places = [
        {"type": "place", "card": card, "space": space(idx)}
        for card in holder["hand"]
        for idx in spaces
        if colour_reason(holder["block"], idx, card) is None
    ]
    return [{"type": "take_coins"}, *buy_options(state, holder, "buy"), *places]


def do_take_coins(state: State, action: Action) -> None:
    gain_coins(state, player(state), TAKE_COINS)
    log_event(state, {"event": "take_coins", "seat": state["active"], "coins": TAKE_COINS})
    finish_action(state)


def do_buy(state: State, action: Action) -> None:
    buy(state, state["active"], action["slot"], action["from_vault"])
    finish_action(state)


def do_place(state: State, action: Action) -> None:
    holder = player(state)
    card = card_in(action, holder["hand"], "in your hand")
    idx = space_field(action)
    reason = open_space_reason(holder["block"], idx) or colour_reason(holder["block"], idx, card)
    if reason:
        raise IllegalAction(f"you can not place there: {reason}")
    holder["hand"].remove(card)
    holder["block"][idx] = card
    log_event(state, {"event": "place", "seat": state["active"], "card": card,
                      "space": space(idx)})
    if is_full(holder["block"]):
        trigger_end(state, "block_full")
    start_powers(state, idx)


def legal_withdraws(state: State) -> list[Action]:
    """Free at any point of your own turn (shared/rules/aldabas.md): 1 to all vault coins."""
    return [{"type": "withdraw", "coins": n}
            for n in range(1, player(state)["vault_coins"] + 1)]


def do_withdraw(state: State, action: Action) -> None:
    holder = player(state)
    coins = action["coins"]
    if not 1 <= coins <= holder["vault_coins"]:
        raise IllegalAction(f"you can move 1 to {holder['vault_coins']} coins out of your "
                            f"vault, not {coins}")
    holder["vault_coins"] -= coins
    holder["purse"] += coins
    log_event(state, {"event": "withdraw", "seat": state["active"], "coins": coins})


# ----- powers ----------------------------------------------------------------------------
def legal_powers(state: State) -> list[Action]:
    powers = [{"type": "power", "space": space(idx)} for idx in state["pending_powers"]]
    return [*powers, {"type": "end_powers"}]


def do_power(state: State, action: Action) -> None:
    activate(state, space_field(action))


def do_end_powers(state: State, action: Action) -> None:
    skip_powers(state)


def door_spaces(holder: dict) -> list[int]:
    return [idx for idx, card in enumerate(holder["block"]) if card is not None]


def coin_sources(holder: dict) -> list[str]:
    sources = [("purse", holder["purse"]), ("vault", holder["vault_coins"])]
    return [name for name, count in sources if count > 0]


def legal_soldier(state: State) -> list[Action]:
    holder = player(state)
    return [
        {"type": "soldier_coin", "source": source, "space": space(idx)}
        for source in coin_sources(holder)
        for idx in door_spaces(holder)
    ]


def do_soldier_coin(state: State, action: Action) -> None:
    holder = player(state)
    source = action["source"]
    if source not in coin_sources(holder):
        raise IllegalAction(f"your {source} holds no coin to move")
    idx = space_field(action)
    if idx not in door_spaces(holder):
        raise IllegalAction("a Soldier moves the coin onto a Door in your block: that space "
                            "holds no door")
    move_soldier_coin(state, source, idx)


def legal_keep(state: State) -> list[Action]:
    return [{"type": "keep", "card": card} for card in state["power"]["drawn"]]


def do_keep(state: State, action: Action) -> None:
    keep_drawn(state, card_in(action, state["power"]["drawn"], "one of the two drawn doors"))


def opponents(state: State) -> list[int]:
    return [seat for seat in range(state["num_players"]) if seat != state["active"]]


def legal_steal(state: State) -> list[Action]:
    others = opponents(state)
    return [
        {"type": "steal", "from": [a, b]}
        for i, a in enumerate(others)
        for b in others[i:]
    ]


def do_steal(state: State, action: Action) -> None:
    victims = action["from"]
    if any(v not in opponents(state) for v in victims):
        raise IllegalAction("you steal only from rivals' purses: name two other seats")
    steal(state, sorted(victims))


def legal_clergy(state: State) -> list[Action]:
    return [{"type": "to_vault", "card": card} for card in player(state)["hand"]]


def do_to_vault(state: State, action: Action) -> None:
    hand_to_vault(state, card_in(action, player(state)["hand"], "in your hand"))


def legal_builder(state: State) -> list[Action]:
    return buy_options(state, player(state), "builder_buy")


def do_builder_buy(state: State, action: Action) -> None:
    buy(state, state["active"], action["slot"], action["from_vault"])
    power_done(state)


# ----- end of turn -----------------------------------------------------------------------
def legal_hand_limit(state: State) -> list[Action]:
    return [{"type": "discard", "card": card} for card in player(state)["hand"]]


def do_discard(state: State, action: Action) -> None:
    card = discard_from_hand(state, action)
    log_event(state, {"event": "discard", "seat": state["active"], "card": card})
    if len(player(state)["hand"]) <= HAND_LIMIT:
        pass_turn(state)


Handler = Callable[[State, Action], None]
Phase = tuple[Callable[[State], list[Action]], dict[str, Handler]]

SETUP_PHASES: dict[str, Phase] = {
    "setup_vault": (legal_setup_vault, {"setup_vault": do_setup_vault}),
    "setup_discard": (legal_setup_discard,
                      {"setup_done": do_setup_done, "setup_discard": do_setup_discard}),
}
TURN_PHASES: dict[str, Phase] = {
    "actions": (legal_actions_phase, {"take_coins": do_take_coins, "buy": do_buy,
                                      "place": do_place}),
    "powers": (legal_powers, {"power": do_power, "end_powers": do_end_powers}),
    "soldier": (legal_soldier, {"soldier_coin": do_soldier_coin}),
    "keep": (legal_keep, {"keep": do_keep}),
    "steal": (legal_steal, {"steal": do_steal}),
    "clergy": (legal_clergy, {"to_vault": do_to_vault}),
    "builder": (legal_builder, {"builder_buy": do_builder_buy}),
    "hand_limit": (legal_hand_limit, {"discard": do_discard}),
}


def with_withdraw(phase: Phase) -> Phase:
    """A turn phase that also takes `withdraw`, listed after the phase's own actions."""
    listed, handlers = phase

    def listed_with_withdraws(state: State) -> list[Action]:
        return [*listed(state), *legal_withdraws(state)]

    return listed_with_withdraws, {**handlers, "withdraw": do_withdraw}


PHASES: dict[str, Phase] = {
    **SETUP_PHASES,
    **{name: with_withdraw(phase) for name, phase in TURN_PHASES.items()},
}


def legal(state: State) -> list[Action]:
    if state["phase"] == "over":
        return []
    return PHASES[state["phase"]][0](state)


def apply_action(state: State, action: Action) -> None:
    kind = action["type"]
    handlers = PHASES[state["phase"]][1]
    if kind not in handlers:
        raise IllegalAction(f"a {kind!r} action is not possible now: the game is in the "
                            f"{state['phase']!r} step and expects one of {sorted(handlers)}")
    handlers[kind](state, action)

