"""The order of play: the free routes of the setup, then turns of a bidding phase and an
action phase, until the turn in which the deck ran out or an action phase in which nobody
acted (a declined offer is not an action)."""

from __future__ import annotations

from engines.base import OVER, end_game, log_event
from engines.types import State

from . import bidding

SETUP, BIDDING, ACTIONS = "setup", "bidding", "actions"
PHASES = (SETUP, BIDDING, ACTIONS, OVER)
OPENING, AUCTION, NAMING, ANSWER = "opening", "auction", "naming", "answer"
END_TEXT = {
    "deck_exhausted": "the deck ran out: that turn was the last",
    "no_actions": "nobody took an action in a whole action phase",
}
END_REASONS = tuple(END_TEXT)


def step(state: State) -> str:
    """The decision the game waits for: the phase, or within it the opening of an
    auction, an auction, naming the Shah's holder, or the answer to a trade offer."""
    phase: str = state["phase"]
    if phase == BIDDING:
        auction = state["bidding"]
        if auction["naming"] is not None:
            return NAMING
        return AUCTION if auction["auction"] is not None else OPENING
    if phase == ACTIONS and state["actions"]["offer"] is not None:
        return ANSWER
    return phase


def current_seat(state: State) -> int | None:
    phase = state["phase"]
    if phase == SETUP:
        seat: int = state["setup_queue"][0]
        return seat
    if phase == BIDDING:
        return bidding.current_seat(state)
    if phase == ACTIONS:
        offer = state["actions"]["offer"]
        return acting_seat(state) if offer is None else int(offer["to"])
    return None


def start_turn(state: State) -> None:
    """Camels face up; the Shah holder reveals one card per player; bidding begins."""
    n = state["num_players"]
    state["turn"] += 1
    state["camel_up"] = [True] * n
    revealed = state["deck"][:n]
    state["deck"] = state["deck"][n:]
    state["face_up"] = revealed
    state["final_turn"] = not state["deck"]
    state["phase"] = BIDDING
    state["bidding"] = {
        "start": state["shah"], "opener": 0, "auctioned": [], "auction": None, "naming": None,
    }
    log_event(state, "turn", {"turn": state["turn"], "shah": state["shah"],
                              "revealed": list(revealed), "deck": len(state["deck"])})


def start_action_phase(state: State) -> None:
    """Clockwise from the Shah holder each player takes any number of actions, then ends."""
    n = state["num_players"]
    state["phase"] = ACTIONS
    state["actions"] = {
        "order": [(state["shah"] + k) % n for k in range(n)], "index": 0,
        "offers": [0] * n, "acted": False, "offer": None,
    }
    log_event(state, "action_phase", {"order": list(state["actions"]["order"])})


def acting_seat(state: State) -> int:
    phase = state["actions"]
    seat: int = phase["order"][phase["index"]]
    return seat


def advance(state: State) -> None:
    """Move on once a phase is complete: setup -> turns of bidding and actions -> over."""
    if state["phase"] == SETUP and not state["setup_queue"]:
        start_turn(state)
    if state["phase"] == BIDDING and bidding.finished(state):
        bidding.discard_unsold_cards(state)
        start_action_phase(state)
    if state["phase"] == ACTIONS and state["actions"]["index"] >= state["num_players"]:
        end_turn(state)


def end_turn(state: State) -> None:
    if state["final_turn"] or not state["actions"]["acted"]:
        reason = "deck_exhausted" if state["final_turn"] else "no_actions"
        end_game(state, reason, None, END_TEXT[reason])
        return
    start_turn(state)
