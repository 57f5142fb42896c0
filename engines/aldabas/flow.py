"""The order of play: setup decisions, turns of two actions, the end of a turn with the
hand limit, the final round and (solo) the Rival's automated turns."""

from __future__ import annotations

from typing import Any

from engines.base import OVER, end_game, log_event
from engines.types import State

from .rival import rival_turn
from .table import RIVAL, Holder, draw

HAND_LIMIT = 7
ACTIONS_PER_TURN = 2
SETUP_VAULT, SETUP_DISCARD = "setup_vault", "setup_discard"
ACTIONS, POWERS, HAND_LIMIT_PHASE = "actions", "powers", "hand_limit"
POWER_PHASES = ("soldier", "keep", "steal", "clergy", "builder")
PHASES = (SETUP_VAULT, SETUP_DISCARD, ACTIONS, POWERS, *POWER_PHASES, HAND_LIMIT_PHASE, OVER)


def player(state: State) -> Holder:
    """The active player's holdings."""
    holder: Holder = state["players"][state["active"]]
    return holder


def set_phase(state: State, phase: str, power: dict[str, Any] | None = None) -> None:
    state["phase"] = phase
    state["power"] = power


def start_setup(state: State, seat: int) -> None:
    """Setup step 4 for `seat`: choose the vault door, then discard for coins."""
    state["active"] = seat
    set_phase(state, SETUP_VAULT)


def finish_setup(state: State) -> None:
    """After a seat's setup: the next seat's, or deal the Dock and start play."""
    seat = state["active"] + 1
    if seat < state["num_players"]:
        start_setup(state, seat)
        return
    if state["mode"] == "multi":
        state["dock"] = [draw(state) for _ in state["costs"]]
        log_event(state, "dock_dealt", {"dock": list(state["dock"])})
        begin_turn(state, 0)
        return
    run_rival_then_player(state)


def begin_turn(state: State, seat: int) -> None:
    state["active"] = seat
    state["actions_left"] = ACTIONS_PER_TURN
    state["turn_number"] += 1
    set_phase(state, ACTIONS)
    log_event(state, "turn", {"seat": seat, "turn": state["turn_number"]})


def finish_action(state: State) -> None:
    """One of the two actions is fully resolved."""
    state["actions_left"] -= 1
    if state["actions_left"] > 0:
        set_phase(state, ACTIONS)
        return
    end_of_turn(state)


def end_of_turn(state: State) -> None:
    """Rulebook "End of Your Turn": discard down to seven, then play passes."""
    if len(player(state)["hand"]) > HAND_LIMIT:
        set_phase(state, HAND_LIMIT_PHASE)
        return
    pass_turn(state)


def pass_turn(state: State) -> None:
    if state["mode"] == "solo":
        if state["end_trigger"] is not None:
            game_over(state)
        else:
            run_rival_then_player(state)
        return
    seat = (state["active"] + 1) % state["num_players"]
    if state["end_trigger"] is not None and seat == state["end_trigger"]["seat"]:
        game_over(state)
    else:
        begin_turn(state, seat)


def run_rival_then_player(state: State) -> None:
    """Solo: the Rival's turn, then the player's (or scoring if the Rival triggered the end)."""
    state["active"] = RIVAL
    state["turn_number"] += 1
    rival_turn(state)
    if state["end_trigger"] is not None:
        game_over(state)
    else:
        begin_turn(state, 0)


def game_over(state: State) -> None:
    """The final round is over: the end record is the trigger (rulebook "Game End")."""
    trigger = state["end_trigger"]
    state["active"] = None
    state["power"] = None
    end_game(state, trigger["reason"], trigger["seat"], trigger["text"])
