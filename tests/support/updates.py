"""What a seat should hear of a recorded match (issue 26): its updates and its clocks."""

from __future__ import annotations

import engines
from referee.match.clock import Clocks, TimeControl
from referee.match.rerun import initial_state, state_after


def expected_updates(record: dict, seat: int) -> list[dict]:
    """The updates `seat` should have had: after each step whose next seat to move is
    another one (the match not over), the entries that step added to the seat's log."""
    engine = engines.get(record["game"], record["game_version"])
    state = initial_state(engine, record)
    control = TimeControl.from_dict(record.get("time_control"))
    clocks = None if control is None else Clocks.start(control, record["num_players"])
    wanted = []
    for step in record["steps"]:
        before = len(engine.observation(state, seat)["log"])
        state = state_after(engine, state, step)
        if clocks is not None:
            clocks.charge(step["seat"], step["elapsed_ms"])
        to_move = engine.current_seat(state)
        if to_move is not None and to_move != seat:
            wanted.append({"protocol": "referee/1", "type": "update",
                           "match_id": record["match_id"], "seat": seat,
                           "step": step["step"],
                           "events": engine.observation(state, seat)["log"][before:],
                           "clock": clocks and clocks.payload(seat)})
    return wanted


def clocks_before(record: dict, step: int) -> dict | None:
    """The `clock` of the decision of `step` (None: the match has no clock)."""
    control = TimeControl.from_dict(record.get("time_control"))
    if control is None:
        return None
    clocks = Clocks.replay(control, record["num_players"], record["steps"][:step])
    return clocks.payload(record["steps"][step]["seat"])
