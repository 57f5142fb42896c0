"""What one viewer may see of a recorded step: the hidden-information rules of the replay
endpoints (`GET /matches/{id}/replay/{step}?seat=N`) and of the live streams
(`GET /matches/{id}/events`), written once.

A viewer is a seat or the spectator (no seat). Its view of a state is the engine's
`observation(state, seat)`: its own secrets, the public state, the public log. Of a step
played, the seat that played it sees it whole; any other viewer sees no action (it may hold
a secret, such as an Aldabas vault door: the log entries the step added say what that
viewer learnt of it) and of a fault only its code and policy. The admin (`whole`) sees
every step whole. Every step shown carries its state hash, computed here for a running
match's steps that were played without one (between its checkpoints, `replay.checkpoint`).
"""

from __future__ import annotations

from dataclasses import dataclass

import engines
from engines.base import JsonObject, State
from referee.match import replay
from referee.match.replay import StepRecord
from referee.match.rerun import state_after


@dataclass(frozen=True)
class Viewer:
    """Whose eyes: a seat (None: the spectator), and whether every step is shown whole
    (the admin)."""

    seat: int | None
    whole: bool = False

    @property
    def key(self) -> str:
        """A name for the viewer's events, e.g. to share them between identical viewers."""
        return f"{'admin' if self.whole else 'view'}:{'' if self.seat is None else self.seat}"


@dataclass(frozen=True)
class SeenStep:
    """A step as a viewer knows it, and where it leads."""

    played: JsonObject  # the step record as the viewer may see it, with the log entries it added
    after: State  # the state after the step
    view_after: JsonObject  # the viewer's observation of that state


def see_step(engine: engines.Game, state: State, view: JsonObject, played: StepRecord,
             viewer: Viewer) -> SeenStep:
    """The step `played` from `state`, as `viewer` (whose view of `state` is `view`) knows
    it: the record masked for that viewer, with the entries it added to the viewer's log."""
    after = state_after(engine, state, played)
    if "state_hash" not in played:  # a running match's step between its checkpoints
        played = replay.with_state_hash(played, replay.state_hash(after))
    view_after = engine.observation(after, viewer.seat)
    events = view_after["log"][len(view["log"]):]
    if viewer.whole or viewer.seat == played["seat"]:
        return SeenStep({**played, "events": events}, after, view_after)
    fault = played["fault"] and {key: played["fault"][key] for key in ("code", "policy")}
    public = {key: value for key, value in played.items() if key not in PRIVATE_PARTS}
    return SeenStep({**public, "action": None, "fault": fault, "events": events}, after,
                    view_after)


PRIVATE_PARTS = ("debug", "info", "debug_truncated")  # a seat's own, and the admin's
