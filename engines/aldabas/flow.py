"""The order of play: setup decisions, turns of two actions, the end of a turn with the
hand limit, the final round and (solo) the Rival's automated turns."""

from __future__ import annotations

from engines.base import State, log_event

from .rival import rival_turn
from .table import draw

HAND_LIMIT = 7
ACTIONS_PER_TURN = 2


def player(state: State) -> dict:
    """The active player's holdings."""
    return state["players"][state["active"]]


def set_phase(state: State, phase: str, power: dict | None = None) -> None:
    state["phase"] = phase
    state["power"] = power


def start_setup(state: State, seat: int) -> None:
    """Setup step 4 for `seat`: choose the vault door, then discard for coins."""
    state["active"] = seat
    set_phase(state, "setup_vault")


def finish_setup(state: State) -> None:
    """After a seat's setup: the next seat's, or deal the Dock and start play."""
    seat = state["active"] + 1
    if seat < state["num_players"]:
        start_setup(state, seat)
        return
    if state["mode"] == "multi":
        state["dock"] = [draw(state) for _ in state["costs"]]
        log_event(state, {"event": "dock_dealt", "dock": list(state["dock"])})
        begin_turn(state, 0)
        return
    run_rival_then_player(state)


def begin_turn(state: State, seat: int) -> None:
    state["active"] = seat
    state["actions_left"] = ACTIONS_PER_TURN
    state["turn_number"] += 1
    set_phase(state, "actions")
    log_event(state, {"event": "turn", "seat": seat, "turn": state["turn_number"]})


def finish_action(state: State) -> None:
    """One of the two actions is fully resolved."""
    state["actions_left"] -= 1
    if state["actions_left"] > 0:
        set_phase(state, "actions")
        return
    end_of_turn(state)


def end_of_turn(state: State) -> None:
    """Rulebook "End of Your Turn": discard down to seven, then play passes."""
    if len(player(state)["hand"]) > HAND_LIMIT:
        set_phase(state, "hand_limit")
        return
    pass_turn(state)


def pass_turn(state: State) -> None:
    if state["mode"] == "solo":
        if state["ending"] is not None:
            game_over(state)
        else:
            run_rival_then_player(state)
        return
    seat = (state["active"] + 1) % state["num_players"]
    if state["ending"] is not None and seat == state["ending"]["by"]:
        game_over(state)
    else:
        begin_turn(state, seat)


def run_rival_then_player(state: State) -> None:
    """Solo: the Rival's turn, then the player's (or scoring if the Rival triggered the end)."""
    state["active"] = "rival"
    state["turn_number"] += 1
    rival_turn(state)
    if state["ending"] is not None:
        game_over(state)
    else:
        begin_turn(state, 0)


def game_over(state: State) -> None:
    state["active"] = None
    set_phase(state, "over")
    log_event(state, {"event": "game_over"})

