"""The match runner: the rules of a match around the engine, one decision at a time.

`MatchPlay` is a match in progress: the engine state, and the replay record so far. It
builds the decision request of the seat to move, judges the seat's reply with the engine
and the failure policy, and records the step; it does no I/O, so the same object serves
a local match (`run_match`, `referee play`) and the worker's resumable driver
(`tournament.driver`), which rebuilds it from the steps recorded in Redis.

A seat is anything that answers a decision payload with a `BotReply`: a push bot called
over HTTP (`PushSeat`); pull seats are answered through Redis by the driver.

Judging a reply, once for both paths (docs/bots.md, "Faults"):
- the bot gave no usable answer: its fault code (`timeout`, `crash`, `malformed`);
- the action fails the game's published action schema (`engines.InvalidAction`, or any
  error the engine raises on it): `malformed`;
- the action is well formed but against the rules now (`engines.IllegalAction`): `illegal`.

Failure policy: each fault code maps to
- "forfeit": the match ends at once. The forfeiting seat ranks last (rank = number of
  seats) with score 0; every other seat shares rank 1 with score 1. The engine's scores
  of an unfinished game are not used: they mean nothing before the end.
- "random": a legal move is substituted, drawn with a generator derived from the match
  seed and the step number (never global randomness), and a strike is recorded; a seat
  with `strike_limit` strikes forfeits at its next fault (no limit when null).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol

import orjson

import engines
from engines.base import Action, JsonObject, Result, State
from engines.observation_json import ObservationWriter, Written
from engines.rng import Rng, seed_state
from referee.match import replay
from referee.match.botclient import (
    DEFAULT_DEADLINE_MS,
    PROTOCOL,
    BotClient,
    BotReply,
    Fault,
    KeptConnections,
)
from referee.match.clock import Clocks, TimeControl
from referee.match.decisions import KeptDecisions
from referee.match.replay import FaultRecord, ForfeitRecord, Record, SeatInfo, StepRecord
from referee.match.rerun import FORFEIT, Tally, state_after
from referee.match.sealing import Sealer
from referee.match.urls import DEFAULT_BOT_HOSTS

RANDOM = "random"
POLICY_CHOICES = (FORFEIT, RANDOM)
DEFAULT_STRIKE_LIMIT = 10

StepCallback = Callable[[StepRecord], None]


class Seat(Protocol):
    """Answers the decisions of one seat."""

    deadline_ms: int

    def info(self) -> SeatInfo:
        """What the replay records about this seat (kind, bot id, name); never a token."""

    async def decide(self, payload: JsonObject) -> BotReply:
        """Answer one decision payload (design.md section 4)."""

    async def aclose(self) -> None:
        """Release connections."""


class PushSeat:
    """A bot called at its URL for every decision (push mode)."""

    def __init__(self, url: str, deadline_ms: int = DEFAULT_DEADLINE_MS, bot_id: str | None = None,
                 name: str | None = None, secret: str = "",
                 allowlist: tuple[str, ...] = tuple(DEFAULT_BOT_HOSTS.split(",")),
                 updates: bool = False, kept: KeptConnections | None = None):
        self.client = BotClient(url, deadline_ms, secret, allowlist, kept)
        self.deadline_ms = deadline_ms
        self.bot_id = bot_id
        self.name = name or url
        self.updates = updates  # the bot hears of the other steps (issue 26)

    def info(self) -> SeatInfo:
        return {"kind": "bot", "bot_id": self.bot_id, "name": self.name,
                "deadline_ms": self.deadline_ms}

    async def decide(self, payload: JsonObject) -> BotReply:
        return await self.client.decide(payload)

    def update(self, payload: JsonObject) -> None:
        """Tell the bot of a step played, in the background; its answer is ignored."""
        self.client.update(payload)

    async def notify(self, payload: JsonObject) -> None:
        await self.client.notify(payload)

    async def aclose(self) -> None:
        await self.client.aclose()

    async def aclose_after_updates(self) -> None:
        await self.client.aclose_after_updates()


@dataclass(frozen=True)
class FailurePolicy:
    """What to do about each fault code: "forfeit" (default) or "random", and how many
    strikes a seat may collect under "random" before its next fault forfeits."""

    timeout: str = FORFEIT
    crash: str = FORFEIT
    malformed: str = FORFEIT
    illegal: str = FORFEIT
    strike_limit: int | None = DEFAULT_STRIKE_LIMIT

    def __post_init__(self) -> None:
        for code in Fault.ALL:
            if getattr(self, code) not in POLICY_CHOICES:
                raise ValueError(f"failure policy for {code} must be one of "
                                 f"{', '.join(POLICY_CHOICES)}")
        limit = self.strike_limit
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)
                                  or limit < 0):
            raise ValueError("strike_limit must be a non-negative integer or null")

    @classmethod
    def uniform(cls, choice: str, strike_limit: int | None = DEFAULT_STRIKE_LIMIT
                ) -> FailurePolicy:
        return cls(**{code: choice for code in Fault.ALL}, strike_limit=strike_limit)

    @classmethod
    def from_dict(cls, data: JsonObject | None) -> FailurePolicy:
        """From a stored policy; records made before the strike limit existed had none."""
        data = dict(data or {})
        data.setdefault("strike_limit", None)
        return cls(**data)

    def to_dict(self) -> JsonObject:
        return {item.name: getattr(self, item.name) for item in fields(self)}

    def action_for(self, fault: str, strikes: int = 0) -> str:
        """What the policy does about `fault` from a seat that has `strikes` already."""
        choice = getattr(self, fault)
        if choice == RANDOM and self.strike_limit is not None and strikes >= self.strike_limit:
            return FORFEIT
        return choice


class MatchPlay:
    """One match in progress: its engine state and its replay record so far."""

    def __init__(self, engine: engines.Game, record: Record, state: State):
        self.engine = engine
        self.record = record
        self.state = state
        self.observations = ObservationWriter(engine)  # each seat's log written once
        self.kept: KeptDecisions | None = None  # what each decision sent, when kept
        self.state_json = b""  # the canonical JSON of `state` when its step was hashed
        self.every_state_hash = False  # hash every step's state, not only the checkpoints'
        self.log_before = 0  # the length of the state's log before the last step played
        self.log_known: dict[int, int] = {}  # seat -> log entries its bot said it keeps
        self.leaf_data = b""  # the sealed record's leaf in the results log, once finished
        self.policy = FailurePolicy.from_dict(record["policy"])
        self.tally = Tally(record["strikes"], record["forfeit"])  # kept in the record too
        control = TimeControl.from_dict(record.get("time_control"))
        self.clocks = None if control is None else Clocks.start(control, len(record["seats"]))

    @classmethod
    def start(cls, game: str, seed: int, options: JsonObject, seats: list[SeatInfo],
              policy: FailurePolicy, match_id: str, started_at: str | None = None,
              version: str | None = None, time_control: TimeControl | None = None,
              keep_decisions: bool = False) -> MatchPlay:
        """A new match under the rules of `version` (None: the current ones), on a clock
        when a `time_control` is given; `seats` are what the replay records of each seat
        (`Seat.info()`); `keep_decisions`: keep what each decision sends
        (`kept_decisions`)."""
        engine = engines.get(game, version)
        state = engine.new_game(num_players=len(seats), seed=seed, options=options)
        record = replay.new_record(
            match_id=match_id, game=game, game_version=engine.version,
            num_players=len(seats), options=state["options"], seed=seed,
            seats=[{"seat": index, **info} for index, info in enumerate(seats)],
            policy=policy.to_dict(), initial_state_hash=replay.state_hash(state),
        )
        if time_control is not None:
            record["time_control"] = time_control.to_dict()
        if started_at:
            record["started_at"] = started_at
        play = cls(engine, record, state)
        if keep_decisions:
            play.kept = KeptDecisions()
        return play

    def resume(self, steps: list[StepRecord], state: State, state_step: int) -> None:
        """Continue after `steps`, already played and recorded, whose first `state_step`
        led to `state` (the others are played again from there)."""
        self.record["steps"] = list(steps)
        for played in steps[state_step:]:
            state = state_after(self.engine, state, played)
        self.state = state
        self.tally = Tally.of(len(self.record["seats"]), steps)
        self.record["strikes"], self.record["forfeit"] = self.tally.strikes, self.tally.forfeit
        if self.clocks is not None:
            self.clocks = Clocks.replay(self.clocks.control, len(self.record["seats"]), steps)

    @property
    def step(self) -> int:
        return len(self.record["steps"])

    @property
    def to_move(self) -> int | None:
        """The seat to decide; None once the game is over or a seat forfeited."""
        if self.record["forfeit"]:
            return None
        return self.engine.current_seat(self.state)

    def deadline_ms(self, seat: int, default_ms: int) -> int:
        """What the seat's decision may take: its clock's allowance, or `default_ms` (the
        seat's fixed deadline) when the match has no clock."""
        return default_ms if self.clocks is None else self.clocks.deadline_ms(seat)

    def payload(self, seat: int, default_deadline_ms: int) -> JsonObject:
        """The decision request of `seat` (with its `clock` when the match has one), its
        observation and legal actions kept when decisions are (`kept_decisions`). The log
        holds only the entries the seat's bot has not seen (and `log_from` says where they
        start) when its last answer asked for that (`log_known`)."""
        log_from = self.log_known.get(seat, 0)
        written = self.observations.write(self.state, seat, log_from)
        if self.kept is not None:
            whole = written if not log_from else self.observations.write(self.state, seat)
            self.kept.keep(self.step, whole.observation, whole.legal_actions_json)
        payload = written_payload(self.engine.name, written, self.record["match_id"], seat,
                                  self.step, self.deadline_ms(seat, default_deadline_ms))
        if log_from:
            payload["log_from"] = log_from
        if self.clocks is not None:
            payload["clock"] = self.clocks.payload(seat)
        return payload

    def _note_log_kept(self, seat: int, reply: BotReply) -> None:
        """A bot that answered its request asking for the log's new entries only keeps
        the log it was sent; any other answer (a fault: the request may not have arrived)
        gets the whole log next time."""
        if reply.fault is None and reply.log_new:
            self.log_known[seat] = self.log_before
        else:
            self.log_known.pop(seat, None)

    def advance(self, seat: int, reply: BotReply, legal_actions: Sequence[Action]
                ) -> StepRecord:
        """Judge the seat's reply to the current decision and record the step (charging the
        seat's clock: an answer over its time is a timeout)."""
        if self.clocks is not None and self.clocks.charge(seat, reply.elapsed_ms) and (
                reply.fault != Fault.TIMEOUT):
            reply = out_of_time(reply, self.clocks.control)
        step, strikes = self.step, self.record["strikes"][seat]
        self.log_before = len(self.state["log"])
        self._note_log_kept(seat, reply)
        action, fault, self.state = _judge(self.engine, self.state, reply, self.policy,
                                           self.record["seed"], step, legal_actions, strikes)
        last = (fault is not None and fault["policy"] == FORFEIT
                or self.engine.current_seat(self.state) is None)
        digest = None
        self.state_json = b""
        if self.every_state_hash or replay.checkpoint(self.record["format"], step, last):
            self.state_json = replay.canonical_form(self.record["format"])(self.state)
            digest = hashlib.sha256(self.state_json).hexdigest()
        entry = replay.step_record(step=step, seat=seat, action=action, fault=fault,
                                   elapsed_ms=reply.elapsed_ms, state_digest=digest)
        if self.clocks is not None:
            entry["clock"] = self.clocks.record()
        _add_debug(entry, reply)
        self.record["steps"].append(entry)
        self.tally.count(entry)
        self.record["forfeit"] = self.tally.forfeit
        return entry

    def kept_decisions(self) -> bytes | None:
        """The stored form of every decision's observation and legal actions as sent, once
        finished (`referee.match.decisions`); None when not kept, or for a match this one
        resumed."""
        return None if self.kept is None else self.kept.packed(self.record)

    def live_json(self) -> bytes:
        """The JSON of `state`: the canonical JSON when its step was hashed, else orjson's."""
        if self.state_json:
            return self.state_json
        try:
            return orjson.dumps(self.state)
        except TypeError:  # an integer beyond 64 bits
            return replay.canonical_form(self.record["format"])(self.state)

    def update_seats(self) -> list[int]:
        """The seats to tell of the step just played: every seat but the one to move next
        (its decision tells it); none once the match is over (the result notice does)."""
        to_move = self.to_move
        if to_move is None:
            return []
        return [seat for seat in range(len(self.record["seats"])) if seat != to_move]

    def update(self, seat: int) -> JsonObject:
        """The update message of `seat` after the step just played (issue 26): the log
        entries that step added, as the seat sees them, and the clocks (null without)."""
        events = self.engine.observation(self.state, seat)["log"][self.log_before:]
        return {"protocol": PROTOCOL, "type": "update", "match_id": self.record["match_id"],
                "seat": seat, "step": self.step - 1, "events": events,
                "clock": None if self.clocks is None else self.clocks.payload(seat)}

    def finish(self, sealer: Sealer | None, finished_at: str | None = None) -> Record:
        """The sealed record of the finished match (signed when the sealer can)."""
        forfeit = self.record["forfeit"]
        self.record["result"] = (forfeit_result(len(self.record["seats"]), forfeit) if forfeit
                                 else self.engine.result(self.state))
        self.record["finished_at"] = finished_at or replay.utc_now()
        record, self.leaf_data = replay.sealed(self.record, sealer)
        return record


async def play(match: MatchPlay, seats: Sequence[Seat], on_step: StepCallback | None = None
               ) -> None:
    """Ask the seats for decisions until the match is over (every seat answers itself)."""
    while (seat := match.to_move) is not None:
        payload = match.payload(seat, seats[seat].deadline_ms)
        reply = await seats[seat].decide(payload)
        entry = match.advance(seat, reply, payload["legal_actions"])
        for other in match.update_seats():
            listener = seats[other]
            if isinstance(listener, PushSeat) and listener.updates:
                listener.update(match.update(other))
        if on_step:
            on_step(entry)


def run_match(game: str, seed: int, options: JsonObject, seats: Sequence[Seat],
              policy: FailurePolicy, match_id: str, on_step: StepCallback | None = None,
              sealer: Sealer | None = None, time_control: TimeControl | None = None
              ) -> Record:
    """Play a whole match in this process and return its sealed replay record; the seats
    are closed at the end."""
    match = MatchPlay.start(game, seed, options, [seat.info() for seat in seats], policy,
                            match_id, time_control=time_control)
    match.every_state_hash = True  # a record read back has them all: this one too

    async def play_and_close() -> None:
        try:
            await play(match, seats, on_step)
        finally:
            for seat in seats:
                await (seat.aclose_after_updates() if isinstance(seat, PushSeat)
                       else seat.aclose())

    asyncio.run(play_and_close())
    return match.finish(sealer)


def decision_payload(game: str, observation: Any, legal_actions: list[Action], match_id: str,
                     seat: int, step: int, deadline_ms: int) -> JsonObject:
    """The push request of design.md section 4; the observation is the engine's (a dict, or
    its JSON from engines.observation_json as an `orjson.Fragment`), so a bot never sees
    more than its seat may."""
    return {
        "protocol": PROTOCOL,
        "type": "decision",
        "match_id": match_id,
        "game": game,
        "seat": seat,
        "step": step,
        "deadline_ms": deadline_ms,
        "observation": observation,
        "legal_actions": legal_actions,
    }


def state_payload(engine: engines.Game, state: State, match_id: str, seat: int, step: int,
                  deadline_ms: int) -> JsonObject:
    """`decision_payload` of `seat` in `state`, its observation as JSON written once."""
    return written_payload(engine.name, ObservationWriter(engine).write(state, seat),
                           match_id, seat, step, deadline_ms)


def written_payload(game: str, written: Written, match_id: str, seat: int, step: int,
                    deadline_ms: int) -> JsonObject:
    """`decision_payload` of an observation already written as JSON (`Written`)."""
    return decision_payload(game, orjson.Fragment(written.observation),
                            written.legal_actions, match_id, seat, step, deadline_ms)


def _add_debug(entry: StepRecord, reply: BotReply) -> None:
    """The reply's debug channel, kept with its step when it said anything."""
    if reply.debug is not None:
        entry["debug"] = reply.debug
    if reply.info is not None:
        entry["info"] = reply.info
    if reply.debug_truncated:
        entry["debug_truncated"] = True


def out_of_time(reply: BotReply, control: TimeControl) -> BotReply:
    """A reply that came after the seat's time ran out: a timeout, whatever it says."""
    return BotReply(None, Fault.TIMEOUT, reply.raw, reply.elapsed_ms,
                    debug=reply.debug, info=reply.info, debug_truncated=reply.debug_truncated,
                    detail=f"the answer took {reply.elapsed_ms:.3f} ms: more than the seat's "
                           f"time left under {control.to_dict()}")


def substitute_action(seed: int, step: int, legal_actions: Sequence[Action]) -> Action:
    """The legal move played for a faulty seat under the random policy: a choice drawn
    from a generator derived from the match seed and the step, so a verifier can redo it."""
    return Rng(seed_state(f"{seed}/substitute/{step}")).choice(legal_actions)


def forfeit_result(num_seats: int, forfeit: ForfeitRecord) -> Result:
    """Forfeiter last with score 0; everyone else shares rank 1 with score 1."""
    loser = forfeit["seat"]
    return {
        "scores": [0 if seat == loser else 1 for seat in range(num_seats)],
        "ranks": [num_seats if seat == loser else 1 for seat in range(num_seats)],
        "details": {"forfeit": dict(forfeit)},
    }


def _judge(engine: engines.Game, state: State, reply: BotReply, policy: FailurePolicy,
           seed: int, step: int, legal_actions: Sequence[Action], strikes: int
           ) -> tuple[Action | None, FaultRecord | None, State]:
    """(the action played, in the engine's canonical form, the fault record, the new state)
    for one reply."""
    code, detail = reply.fault, reply.detail
    if code is None:
        try:
            action: Action = engine.canonical_action(reply.action)
            return action, None, engine.apply(state, action)
        except engines.IllegalAction as error:
            code, detail = Fault.ILLEGAL, error.reason
        except engines.EngineError as error:
            code, detail = Fault.MALFORMED, error.reason
        except (TypeError, ValueError, OverflowError, RecursionError) as error:
            code, detail = Fault.MALFORMED, f"the action cannot be read: {error}"
    choice = policy.action_for(code, strikes)
    fault = replay.fault_record(code=code, detail=detail, raw=reply.raw, policy=choice)
    if choice == FORFEIT:
        return None, fault, state
    action = substitute_action(seed, step, legal_actions)
    return action, fault, engine.apply(state, action)
