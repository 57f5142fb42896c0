"""A match's recorded progress in Redis, as the worker's driver reads and writes it (asyncio).

Every write of a driver is fenced by the match's lease (`match:{id}:lease`, holding the
driver's name): a Lua script checks the holder before it writes, so a driver presumed dead
(its lease expired, another worker took the match over) can never write a step, park or
finish the match. A step is recorded atomically, with the state after it when the driver
keeps it (every step of a match with a pull seat, the checkpoints of others: `record`),
which is what lets any worker continue the match from its last recorded step.

The scripts are in `tournament.store.scripts`; they read the time from Redis (`TIME`), so
a pull seat's deadline does not depend on the clocks of the machines that park and resume
it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
import redis.asyncio as aioredis
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

from referee.errors import RefereeError
from referee.match import compact, merkle, replay
from referee.match.replay import Record, StepRecord
from tournament.store.codec import loads
from tournament.store.keys import (
    MatchField,
    MatchPart,
    MatchStatus,
    applied_key,
    bot_key,
    claim_key,
    events_channel,
    inbox_key,
    ladder_notices_key,
    ladders_key,
    lease_key,
    lease_key_pattern,
    log_ids_key,
    log_level_key,
    match_key,
    playing_key,
    running_key,
    timers_key,
)
from tournament.store.ladders import CHECKS
from tournament.store.matches import match_fields
from tournament.store.metrics import decision_increments, status_increment
from tournament.store.pull import SIGNAL_TTL_S
from tournament.store.scripts import Scripts
from tournament.store.steps import Argument, StepWriter, resp

LEASE_TTL_MS = 6000


class LeaseLost(RefereeError):
    """Another driver holds the match now: this one must stop without writing."""


@dataclass
class Loaded:
    """What a driver reads to continue a match, in one round trip."""

    match: dict[str, Any]  # as `Store.get_match` reads it
    state: dict[str, Any] | None  # the live state (None: none recorded)
    steps: list[StepRecord]
    state_step: int = 0  # the steps the live state is after (it may lag behind `steps`)


class Progress:
    """The driver's reads and fenced writes of one Redis (asyncio client)."""

    def __init__(self, client: aioredis.Redis):
        self.redis = client
        self.scripts = Scripts(client.register_script)
        self.steps = StepWriter(client)  # the scripts' calls (`_run`), pipelined

    async def load(self, match_id: str) -> Loaded | None:
        fields, live, steps = await self.steps.transaction([
            resp(["HGETALL", match_key(match_id)]),
            resp(["GET", match_key(match_id, MatchPart.LIVE)]),
            resp(["LRANGE", match_key(match_id, MatchPart.STEPS), 0, -1])])
        match = match_fields(_hash(fields))
        if match is None:
            return None
        state = loads(live) if live else None
        return Loaded(match, state and state["state"], [orjson.loads(step) for step in steps],
                      state["step"] if state else 0)

    async def take_lease(self, match_id: str, holder: str) -> bool:
        return bool(await self._run(self.scripts.take_lease, [lease_key(match_id), running_key()],
                                    [holder, LEASE_TTL_MS, match_id]))

    async def renew_leases(self, leases: dict[str, str]) -> list[str]:
        """Renew every lease held (match id -> holder) in one round trip; the ids of those
        found taken by another driver."""
        if not leases:
            return []
        answers = await self._run_each([
            (self.scripts.renew_lease, [lease_key(match_id), running_key()],
             [holder, LEASE_TTL_MS, match_id]) for match_id, holder in leases.items()])
        return [match_id for match_id, answer in zip(leases, answers, strict=True)
                if answer == 0]

    async def timer_due(self) -> bool:
        """Whether a timer is due now, by Redis' clock (`Store.fire_due_timers` fires
        them): a look on the loop, without a thread, several times a second."""
        return bool(await self._run(self.scripts.due_timers, [timers_key()], [1]))

    async def ladder_work(self) -> bool:
        """Whether the ladders' upkeep has anything to look at (`tournament.ladder_upkeep`): a
        ladder, a notice, an entry check queued or claimed. A look on the loop, without a
        thread, every second: a worker of a Redis without ladders skips the upkeep's three
        thread hops."""
        return bool(await self.steps.call(resp(["EXISTS", ladders_key(), ladder_notices_key(),
                                                CHECKS.queued, CHECKS.claimed])))

    async def release_lease(self, match_id: str, holder: str) -> None:
        await self._run(self.scripts.release_lease, [lease_key(match_id), running_key()],
                        [holder, match_id])

    async def start(self, match_id: str, game: str, holder: str,
                    started_at: str) -> str:
        """Mark the match running under this driver; its `started_at` (the first one's).
        Its first start counts in the cluster's metrics."""
        answer = await self._run(self.scripts.start, [match_key(match_id), lease_key(match_id)],
                                 [holder, match_id, started_at])
        if not answer:
            raise LeaseLost(match_id)
        first_started_at, first = answer
        if first:
            await self.steps.call(_count_status(game, MatchStatus.RUNNING))
        return first_started_at.decode()

    async def record(self, match_id: str, holder: str, entry: StepRecord, state_json: bytes,
                     to_move: int | None, pull_move_played: bool, game: str, bot: str,
                     clocks: dict[str, Any] | None = None) -> None:
        """Record a step with the state after it, and count its decision in the cluster's
        metrics, in one round trip (idempotent: a step already recorded by this very write,
        before a lost connection, is not recorded twice), sent by `steps` with the steps
        the other matches recorded meanwhile. `state_json`: the state's JSON, kept as
        the live state (b"": the live state is left as it is, a few steps behind: a driver
        that continues the match plays the steps after it again); `clocks`: the match's
        clocks after it (`Clocks.snapshot`), kept with the live state for the pull seats'
        observations."""
        step = entry["step"]
        live = state_json and b'{"step":%d,"state":%b%b}' % (
            step + 1, state_json, b',"clocks":' + orjson.dumps(clocks) if clocks else b"")
        counts = decision_increments(game, bot, entry["elapsed_ms"] / 1000,
                                     entry["fault"]["code"] if entry["fault"] else None)
        keys = [match_key(match_id), match_key(match_id, MatchPart.STEPS),
                match_key(match_id, MatchPart.LIVE), lease_key(match_id),
                applied_key(match_id, step), events_channel(match_id)]
        args: list[Argument] = [holder, step, orjson.dumps(entry), live, orjson.dumps(to_move),
                                "1" if pull_move_played else "0", SIGNAL_TTL_S,
                                orjson.dumps(counts)]
        answer = await self._run(self.scripts.record, keys, args)
        if answer == 0:
            raise LeaseLost(match_id)
        if answer == -1:
            raise LeaseLost(f"{match_id}: step {step} does not follow the recorded steps")

    async def park(self, match_id: str, holder: str, seat: int, step: int) -> bool:
        """Park the match at a pull seat's decision; False when a move is already waiting."""
        answer = await self._run(self.scripts.park, [
            match_key(match_id), lease_key(match_id), running_key(), inbox_key(match_id, seat)],
            [holder, match_id, step])
        if answer == 0:
            raise LeaseLost(match_id)
        return answer == 1

    async def take_move(self, match_id: str, seat: int, step: int) -> dict[str, Any] | None:
        """The move posted for `step` by the seat's client, if any; moves posted for
        other (older) steps are dropped."""
        while (raw := await self.redis.lpop(inbox_key(match_id, seat))) is not None:
            # One element (no `count`), which redis-py's typing of LPOP does not tell.
            move = orjson.loads(raw)  # type: ignore[arg-type]
            if move["step"] == step:
                return move
        return None

    async def claim_step(self, match_id: str, seat: int, step: int) -> bool:
        """Claim `step` for its timeout: False when a move was accepted for it first."""
        return bool(await self.redis.set(claim_key(match_id, step), seat, nx=True,
                                         ex=SIGNAL_TTL_S))

    async def decision_clock(self, match_id: str) -> tuple[int, int]:
        """(when the current decision was put, now), in ms of Redis time."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(match_key(match_id), MatchField.ASKED_AT)
            pipe.time()
            asked_at, (seconds, micros) = await pipe.execute()
        return int(asked_at or 0), seconds * 1000 + micros // 1000

    async def finish(self, match_id: str, holder: str, record: Record, seats: int,
                     leaf_data: bytes | None = None,
                     kept: tuple[bytes | None, int] = (None, 0)) -> int:
        """Store the sealed replay and the result, log it (its leaf appended to the results
        log), drop what only a running match needs and release the lease, atomically; the
        record's index in the log. `leaf_data`: the record's `replay.leaf_data`, when the
        caller has it (`replay.sealed`); `kept`: the driver's kept decisions, when it has
        them (`KeptDecisions.packed`), and the seconds they stay."""
        leaf = merkle.leaf_hash(leaf_data or replay.leaf_data(record))
        answer = await self._fenced(self.scripts.end_match, _end_keys(match_id, seats), [
            holder, match_id, MatchStatus.FINISHED.value, compact.encode(record), leaf,
            kept[0] or "", kept[1], MatchField.RESULT, compact.pack(record["result"]),
            MatchField.FORFEIT, orjson.dumps(record["forfeit"]),
            MatchField.FINISHED_AT, record["finished_at"]],
            (record["game"], MatchStatus.FINISHED))
        return int(answer[1])

    async def fail(self, match_id: str, game: str, holder: str, error: str, finished_at: str,
                   seats: int) -> None:
        await self._fenced(self.scripts.end_match, _end_keys(match_id, seats, True), [
            holder, match_id, MatchStatus.FAILED.value, "", "", "", 0, MatchField.ERROR, error,
            MatchField.FINISHED_AT, finished_at], (game, MatchStatus.FAILED))

    async def get_bots(self, bot_ids: list[str]) -> list[dict[str, Any] | None]:
        """`Store.get_bots`, on the loop: each bot's record (None: not registered)."""
        if not bot_ids:
            return []
        return [loads(raw) for raw in
                await self.steps.call(resp(["MGET", *map(bot_key, bot_ids)]))]

    async def take_bot_slots(self, match_id: str, bot_ids: list[str], cap: int) -> bool:
        """Take one concurrent-match slot of every bot for `match_id`, all or none, in one
        round trip; False when a bot already plays `cap` other matches. A slot whose match
        has no lease (its driver finished, parked or died) is free again."""
        prefix, suffix = lease_key_pattern()
        return bool(await self._run(self.scripts.take_slots,
                                    [playing_key(bot) for bot in sorted(set(bot_ids))],
                                    [match_id, cap, prefix, suffix]))

    async def release_bot_slots(self, match_id: str, bot_ids: list[str]) -> None:
        await self.steps.transaction([resp(["SREM", playing_key(bot), match_id])
                                      for bot in sorted(set(bot_ids))])

    async def _run(self, script: AsyncScript, keys: list[str], args: list[Argument]) -> Any:
        """`script`'s answer, run on `steps`' connection (EVALSHA; loaded first on a Redis
        that lacks it): `_run_each` for one script, kept apart for the step's path (a call
        a decision, without the lists)."""
        try:
            return await self.steps.call(_evalsha(script, keys, args))
        except NoScriptError:
            return await script(keys=keys, args=args)

    async def _run_each(self, calls: list[tuple[AsyncScript, list[str], list[Any]]],
                        then: list[bytes] | None = None) -> list[Any]:
        """The answers of scripts run one after the other on `steps`' connection, in one
        round trip with the commands `then` (whose replies are not answered); a script
        Redis lacks is loaded and run again; any other error reply raises."""
        replies = await self.steps.call_each(
            [_evalsha(script, keys, args) for script, keys, args in calls] + (then or []))
        answers = []
        for (script, keys, args), reply in zip(calls, replies, strict=False):
            if isinstance(reply, NoScriptError):
                reply = await script(keys=keys, args=args)
            elif isinstance(reply, Exception):
                raise reply
            answers.append(reply)
        return answers

    async def _fenced(self, script: AsyncScript, keys: list[str], args: list[Any],
                      status: tuple[str, MatchStatus] | None = None) -> Any:
        """Run a lease-checking script (and count the status a match enters, in the same
        round trip) and answer what it answers; LeaseLost when the lease is not ours."""
        answer, = await self._run_each([(script, keys, args)],
                                       [_count_status(*status)] if status else None)
        if not answer:
            raise LeaseLost(keys[0])
        return answer


def _evalsha(script: AsyncScript, keys: list[str], args: list[Any]) -> bytes:
    return resp(["EVALSHA", script.sha, len(keys), *keys, *args])


def _count_status(game: str, status: MatchStatus) -> bytes:
    """The command that counts a match entering `status` (`record_match_status`)."""
    return resp(["HINCRBY", *status_increment(game, status.value)])


def _hash(reply: list[bytes] | dict[bytes, bytes]) -> dict[bytes, bytes]:
    """HGETALL's reply as a dict (RESP2 answers a flat list of fields and values)."""
    return reply if isinstance(reply, dict) else dict(zip(reply[::2], reply[1::2], strict=True))


def _end_keys(match_id: str, seats: int, keep_progress: bool = False) -> list[str]:
    """KEYS of the END_MATCH script; a failed match keeps its steps and last state (to
    look into)."""
    progress = [] if keep_progress else [match_key(match_id, MatchPart.LIVE),
                                          match_key(match_id, MatchPart.STEPS)]
    return [match_key(match_id), lease_key(match_id), running_key(),
            match_key(match_id, MatchPart.REPLAY), events_channel(match_id), log_level_key(0),
            log_ids_key(), match_key(match_id, MatchPart.DECISIONS), *progress,
            *(inbox_key(match_id, seat) for seat in range(seats))]
