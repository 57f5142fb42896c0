"""The match runner: plays one match in-process by asking each seat for its decisions.

A seat is anything that answers a decision payload of the bot protocol with a `BotReply`:
a push bot called over HTTP (`PushSeat`), or a pull seat that waits for its client
through Redis (`tournament.jobs.PullSeat`). The runner judges every answer with the
engine, applies the failure policy and returns the replay record (`referee.replay`).

Failure policy: each fault code (timeout, crash, malformed, illegal) maps to
- "forfeit": the match ends at once. The forfeiting seat ranks last (rank = number of
  seats) with score 0; every other seat shares rank 1 with score 1. The engine's scores
  of an unfinished game are not used: they mean nothing before the end.
- "random": a legal move is substituted, drawn with a generator derived from the match
  seed and the step number (never global randomness), and a strike is recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Protocol

import engines
from engines.rng import Rng, seed_state

from . import replay
from .botclient import PROTOCOL, BotClient, BotReply, Fault

FORFEIT = "forfeit"
RANDOM = "random"
POLICY_CHOICES = (FORFEIT, RANDOM)

StepCallback = Callable[[dict], None]
StateCallback = Callable[[int, dict, int | None], None]


class Seat(Protocol):
    """Answers the decisions of one seat."""

    deadline_ms: int

    def info(self) -> dict:
        """What the replay records about this seat (kind, bot id, name); never a token."""

    def decide(self, payload: dict) -> BotReply:
        """Answer one decision payload (design.md section 4)."""

    def close(self) -> None:
        """Release connections."""


class PushSeat:
    """A bot called at its URL for every decision (push mode)."""

    def __init__(self, url: str, deadline_ms: int = 2000, bot_id: str | None = None,
                 name: str | None = None):
        self.client = BotClient(url, deadline_ms)
        self.deadline_ms = deadline_ms
        self.bot_id = bot_id
        self.name = name or url

    def info(self) -> dict:
        return {"kind": "bot", "bot_id": self.bot_id, "name": self.name,
                "deadline_ms": self.deadline_ms}

    def decide(self, payload: dict) -> BotReply:
        return self.client.decide(payload)

    def close(self) -> None:
        self.client.close()


@dataclass(frozen=True)
class FailurePolicy:
    """What to do about each fault code: "forfeit" (default) or "random"."""

    timeout: str = FORFEIT
    crash: str = FORFEIT
    malformed: str = FORFEIT
    illegal: str = FORFEIT

    def __post_init__(self) -> None:
        for item in fields(self):
            if getattr(self, item.name) not in POLICY_CHOICES:
                raise ValueError(f"failure policy for {item.name} must be one of "
                                 f"{', '.join(POLICY_CHOICES)}")

    @classmethod
    def uniform(cls, choice: str) -> FailurePolicy:
        return cls(**{code: choice for code in Fault.ALL})

    @classmethod
    def from_dict(cls, data: dict | None) -> FailurePolicy:
        return cls(**(data or {}))

    def to_dict(self) -> dict:
        return {code: getattr(self, code) for code in Fault.ALL}

    def action_for(self, fault: str) -> str:
        return getattr(self, fault)


@dataclass
class _Outcome:
    """The runner's judgement of one reply: the new state, or a fault (or both under
    the random policy)."""

    state: dict
    action: dict | None
    fault: dict | None


def run_match(game: str, seed: int, options: dict, seats: list[Seat], policy: FailurePolicy,
              match_id: str, on_step: StepCallback | None = None,
              on_state: StateCallback | None = None, secret: str = "") -> dict:
    """Play a whole match and return its replay record, sealed: with its hash chain, and
    signed when a `secret` is given.

    `on_step(step_record)` is called as each step is recorded; `on_state(step, state, to_move)`
    is called with the state each decision is asked in and its seat to move, and once more
    with the final state.
    """
    engine = engines.get(game)
    state = engine.new_game(num_players=len(seats), seed=seed, options=options)
    record = replay.new_record(
        match_id=match_id, game=game, game_version=engine.version, num_players=len(seats),
        options=state["options"], seed=seed,
        seats=[{"seat": index, **seat.info()} for index, seat in enumerate(seats)],
        policy=policy.to_dict(), initial_state_hash=replay.state_hash(state),
    )
    while (seat := engine.current_seat(state)) is not None:
        step = len(record["steps"])
        if on_state:
            on_state(step, state, seat)
        payload = decision_payload(engine, state, match_id, seat, step, seats[seat].deadline_ms)
        reply = seats[seat].decide(payload)
        outcome = _judge(engine, state, reply, policy, seed, step, payload["legal_actions"])
        state = outcome.state
        entry = replay.step_record(step=step, seat=seat, action=outcome.action,
                                   fault=outcome.fault, elapsed_ms=reply.elapsed_ms,
                                   state_digest=replay.state_hash(state))
        record["steps"].append(entry)
        if on_step:
            on_step(entry)
        if outcome.fault:
            record["strikes"][seat] += 1
        if outcome.action is None:
            record["forfeit"] = {"seat": seat, "step": step, "fault": outcome.fault["code"]}
            break
    if on_state:
        on_state(len(record["steps"]), state, engine.current_seat(state))
    record["result"] = (forfeit_result(len(seats), record["forfeit"]) if record["forfeit"]
                        else engine.result(state))
    record["finished_at"] = replay.utc_now()
    return replay.seal(record, secret)


def decision_payload(engine: engines.Game, state: dict, match_id: str, seat: int, step: int,
                     deadline_ms: int) -> dict:
    """The push request of design.md section 4; the observation is the engine's, so a bot
    never sees more than its seat may."""
    observation = engine.observation(state, seat)
    return {
        "protocol": PROTOCOL,
        "match_id": match_id,
        "game": engine.name,
        "seat": seat,
        "step": step,
        "deadline_ms": deadline_ms,
        "observation": observation,
        "legal_actions": observation["legal_actions"],
    }


def substitute_action(seed: int, step: int, legal_actions: list[dict]) -> dict:
    """The legal move played for a faulty seat under the random policy: a choice drawn
    from a generator derived from the match seed and the step, so a verifier can redo it."""
    return Rng(seed_state(f"{seed}/substitute/{step}")).choice(legal_actions)


def forfeit_result(num_seats: int, forfeit: dict) -> dict:
    """Forfeiter last with score 0; everyone else shares rank 1 with score 1."""
    loser = forfeit["seat"]
    return {
        "scores": [0 if seat == loser else 1 for seat in range(num_seats)],
        "ranks": [num_seats if seat == loser else 1 for seat in range(num_seats)],
        "details": {"forfeit": dict(forfeit)},
    }


def _judge(engine: engines.Game, state: dict, reply: BotReply, policy: FailurePolicy,
           seed: int, step: int, legal_actions: list[dict]) -> _Outcome:
    code, detail = reply.fault, reply.detail
    if code is None:
        try:
            return _Outcome(engine.apply(state, reply.action), reply.action, None)
        except (engines.IllegalAction, engines.InvalidAction) as error:
            code, detail = Fault.ILLEGAL, error.reason
    choice = policy.action_for(code)
    fault = replay.fault_record(code=code, detail=detail, raw=reply.raw, policy=choice)
    if choice == FORFEIT:
        return _Outcome(state, None, fault)
    action = substitute_action(seed, step, legal_actions)
    return _Outcome(engine.apply(state, action), action, fault)
