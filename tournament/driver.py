"""Driving one stored match forward, on a worker's event loop, from wherever it stands.

`drive(context, match_id)` is what every match job does, whatever woke it (the match was
created, a pull seat moved, a pull deadline passed, a bot's concurrent-match slot may be
free, a worker died): take the match's lease, read its recorded steps and the state after
them, and continue with the seat to move. Bots that already answered are never asked
again; the replay is the one an uninterrupted run with the same answers makes.

- A push seat is asked over HTTP (`referee.match.botclient`), the deadline counted from the
  moment the request is sent.
- A pull seat's move comes through Redis. When none is waiting, the match *parks*: its
  lease is released and the driver returns, holding nothing. The accepted move re-queues
  the match (`POST /matches/{id}/actions`), and a job scheduled at the seat's deadline
  resumes it to apply the failure policy if no move came.
- Over a bot's concurrent-match cap the match is put back for later (a job scheduled
  `DEFER_S` ahead), so waiting matches hold no worker.

Redis going away (a restart) is waited out: each write is retried with backoff, and a
driver that lost its lease meanwhile (another worker took the match over) stops without
writing anything. A failure of the referee itself (a bug) marks the match failed; nothing
a bot sends can.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import redis

from engines.base import Result
from referee.config import Config
from referee.logs import Throttled
from referee.match import replay
from referee.match.botclient import (
    PROTOCOL,
    RAW_LIMIT,
    BotReply,
    Fault,
    KeptConnections,
    debug_channel,
)
from referee.match.clock import TimeControl
from referee.match.replay import Record, SeatInfo, StepRecord
from referee.match.runner import FailurePolicy, MatchPlay, PushSeat
from referee.match.sandbox import Limits
from referee.match.sealing import Sealer
from tournament import build_cache, hosted, results, wakeups
from tournament.bots import version_url
from tournament.store import MatchStatus, Store, seat_deadline_ms
from tournament.store.log import completes_a_node
from tournament.store.metrics import PULL_SEAT
from tournament.store.progress import LeaseLost, Loaded, Progress

log = logging.getLogger(__name__)
_DISK_TROUBLE = Throttled(log, 60.0)  # one line a minute while the disk holds no build

DEFER_S = 0.5
CACHE_RETRY_S = 5.0  # a match whose hosted build this worker's disk could not hold waits
BACKOFF_S = (0.05, 2.0)
T = TypeVar("T")
BotSeat = PushSeat | hosted.HostedSeat


@dataclass
class Context:
    """What the drivers of one worker process share."""

    progress: Progress
    store: Store
    config: Config
    sealer: Sealer
    name: str = "driver"
    sandbox: Limits | None = None  # a hosted worker's: it plays hosted bots (issue 29)
    leases: dict[str, str] = field(default_factory=dict)
    background: set[asyncio.Task] = field(default_factory=set)  # notices, seats closing
    kept: KeptConnections | None = None  # idle connections to bots, between matches
    counting: concurrent.futures.Executor | None = None  # see `counted`

    async def persist(self, call: Callable[..., Awaitable[T]], *args: object,
                      **kwargs: object) -> T:
        """`await call(*args, **kwargs)` until Redis answers: a restart is waited out,
        never fatal."""
        delay = BACKOFF_S[0]
        while True:
            try:
                return await call(*args, **kwargs)
            except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError,
                    OSError) as error:
                log.warning("Redis unavailable (%s); retrying in %.2f s", error, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF_S[1])

    async def in_thread(self, function: Callable[..., T], *args: object) -> T:
        """A synchronous store or rq call, off the event loop, retried like `persist`."""
        return await self.persist(asyncio.to_thread, function, *args)

    async def counted(self, count: Callable[..., T], *args: object) -> T:
        """`in_thread` for a count of results (`tournament.results`), run by `counting`
        (None: asyncio's threads). A worker's is one thread: the counts of a game watch the
        same key, and counts made at once (a worker's matches end together) start over for
        each other and fight for the GIL with the loop; one at a time they do neither (~3%
        of a worker's CPU: docs/performance.md §10)."""
        return await self.persist(asyncio.get_running_loop().run_in_executor, self.counting,
                                  count, *args)


async def drive(context: Context, match_id: str) -> dict[str, Any]:
    """Continue the match as far as it can go now; a summary of where it stands. The
    match is read once, under its lease (a match over has none to hold: its lease is
    taken for as long as its outcome is counted)."""
    holder = f"{context.name}/{uuid.uuid4().hex[:12]}"
    if not await context.persist(context.progress.take_lease, match_id, holder):
        log.info("match busy: another driver holds it", extra={"match_id": match_id})
        return _summary(match_id, "busy")
    context.leases[match_id] = holder
    try:
        loaded = await context.persist(context.progress.load, match_id)
        if loaded is None:
            raise LookupError(f"no match {match_id}")
        if loaded.match["status"] in (MatchStatus.FINISHED, MatchStatus.FAILED):
            await context.counted(results.count_outcome, context.store, loaded.match)
            return _summary(match_id, loaded.match["status"])
        return await _drive_leased(context, loaded, holder)
    except LeaseLost:
        log.warning("match %s: lease lost, another driver continues it", match_id)
        return _summary(match_id, "superseded")
    finally:
        context.leases.pop(match_id, None)
        await context.persist(context.progress.release_lease, match_id, holder)


async def _drive_leased(context: Context, loaded: Loaded, holder: str) -> dict[str, Any]:
    progress, match = context.progress, loaded.match
    match_id = match["id"]
    bots = _seated_bots(match)
    cap = context.config.bot_max_matches
    if bots and not await context.persist(progress.take_bot_slots, match_id, bots, cap):
        await context.in_thread(wakeups.defer_match, context.store, match, DEFER_S)
        log.info("match deferred: a bot plays as many matches as allowed",
                 extra={"match_id": match_id})
        return _summary(match_id, "deferred")
    seats: dict[int, BotSeat] = {}
    try:
        seats = await _bot_seats(context, match)
        started_at = await context.persist(progress.start, match_id, match["game"], holder,
                                           replay.utc_now())
        return await _play(context, loaded, holder, seats, started_at)
    except (LeaseLost, asyncio.CancelledError):
        raise
    except build_cache.CacheFailed as error:  # this machine's disk, not the match: later
        _DISK_TROUBLE.log(logging.ERROR, "match %s deferred: %s", match_id, error)
        await context.in_thread(wakeups.defer_match, context.store, match, CACHE_RETRY_S)
        return _summary(match_id, "deferred")
    except Exception:
        log.exception("match %s could not be played", match_id)
        await context.persist(
            progress.fail, match_id, match["game"], holder,
            "the match stopped on an internal error (see the worker log)", replay.utc_now(),
            match["num_players"])
        await context.counted(results.count_failed, context.store, match_id)
        raise
    finally:
        _close_seats(context, seats)
        if bots:
            await context.persist(progress.release_bot_slots, match_id, bots)


async def _play(context: Context, loaded: Loaded, holder: str, seats: dict[int, BotSeat],
                started_at: str) -> dict[str, Any]:
    match, progress = loaded.match, context.progress
    match_id = match["id"]
    play = MatchPlay.start(match["game"], match["seed"], match["options"], _seat_infos(match),
                           FailurePolicy.from_dict(match["policy"]), match_id, started_at,
                           version=match["game_version"],
                           time_control=TimeControl.from_dict(match.get("time_control")),
                           keep_decisions=context.config.keep_decisions_s > 0)
    play.resume(loaded.steps, loaded.state or play.state, loaded.state_step)
    pulled = len(seats) < len(match["seats"])  # a pull seat's client reads the live state
    while (seat := play.to_move) is not None:
        payload = play.payload(seat, seat_deadline_ms(match, seat))
        deadline_ms = payload["deadline_ms"]
        reply: BotReply | None
        if seat in seats:
            reply = await seats[seat].decide(payload)
        else:
            reply = await _pull_reply(context, match, holder, seat, play.step, deadline_ms)
            if reply is None:
                return _summary(match_id, "parked")
        entry = play.advance(seat, reply, payload["legal_actions"])
        bot = match["seats"][seat].get("bot_id") or PULL_SEAT
        live = play.state_json or (play.live_json() if pulled else b"")
        await context.persist(progress.record, match_id, holder, entry, live,
                              play.to_move, seat not in seats, match["game"], bot,
                              play.clocks.snapshot() if play.clocks else None)
        _send_updates(play, seats)
        if (fault := entry["fault"]) is not None:
            _log_fault(match_id, bot, entry, fault["code"])
    record = play.finish(context.sealer)
    index = await context.persist(progress.finish, match_id, holder, record,
                                  match["num_players"], play.leaf_data,
                                  (play.kept_decisions(), context.config.keep_decisions_s))
    log.info("match finished", extra={"match_id": match_id, "steps": len(record["steps"]),
                                      "duration_ms": _duration_ms(record)})
    await context.counted(results.count_finished, context.store, match_id, record,
                          as_finished(match, record, started_at, index))
    if completes_a_node(index + 1):  # else a reader's `complete_log` has nothing to add
        await context.in_thread(context.store.complete_log, index + 1)
    _send_result_notices(context, record, index, seats)
    return _summary(match_id, MatchStatus.FINISHED.value, record["result"])


def as_finished(match: dict[str, Any], record: Record, started_at: str,
                log_index: int) -> dict[str, Any]:
    """The match as `Store.get_match` reads it once `Progress.finish` stored its end
    (`record`, at `log_index` of the results log), from the match as loaded."""
    return {**match, "status": MatchStatus.FINISHED.value, "step": len(record["steps"]),
            "to_move": None, "result": record["result"], "forfeit": record["forfeit"],
            "error": None, "started_at": started_at, "finished_at": record["finished_at"],
            "log_index": log_index}


async def _pull_reply(context: Context, match: dict[str, Any], holder: str, seat: int, step: int,
                      deadline_ms: int) -> BotReply | None:
    """The pull seat's move for `step`; a timeout once its deadline has passed; None when
    the match parked to wait for it."""
    progress, match_id = context.progress, match["id"]
    while True:
        move = await context.persist(progress.take_move, match_id, seat, step)
        asked_at, now = await context.persist(progress.decision_clock, match_id)
        if move is not None:
            await context.in_thread(context.store.cancel_deadline_timer, match_id)
            arrived = move.get("arrived_ms", now)  # when the API took it, in Redis time
            if arrived - asked_at > deadline_ms:  # taken before its timeout was noticed
                return BotReply(action=None, fault=Fault.TIMEOUT, raw="",
                                elapsed_ms=float(arrived - asked_at),
                                detail=f"the client of seat {seat} moved {arrived - asked_at}"
                                       f" ms after it was asked, past {deadline_ms} ms")
            debug, info, truncated = debug_channel(move)
            return BotReply(action=move["action"], fault=None,
                            raw=replay.canonical(move["action"]).decode()[:RAW_LIMIT],
                            elapsed_ms=float(max(arrived - asked_at, 0)), debug=debug,
                            info=info,
                            debug_truncated=truncated or move.get("debug_truncated") is True)
        due = asked_at + deadline_ms
        if now < due:
            await context.in_thread(wakeups.schedule_deadline, context.store, match, step,
                                    (due - now) / 1000)
            if await context.persist(progress.park, match_id, holder, seat, step):
                context.leases.pop(match_id, None)
                return None
            continue  # a move came in meanwhile (the deadline job will find nothing to do)
        if await context.persist(progress.claim_step, match_id, seat, step):
            return BotReply(action=None, fault=Fault.TIMEOUT, raw="",
                            elapsed_ms=float(now - asked_at),
                            detail=f"the client of seat {seat} did not move within "
                                   f"{deadline_ms} ms")


async def _bot_seats(context: Context, match: dict[str, Any]) -> dict[int, BotSeat]:
    """A seat per bot, keyed by seat (bots are read in one round trip): a client of each
    push bot; a program of each hosted bot, all started before the first decision. Those
    made are closed when one cannot be (their builds are released, their programs
    stopped)."""
    infos = [seat for seat in match["seats"] if seat["kind"] == "bot"]
    bots = await context.persist(context.progress.get_bots, [seat["bot_id"] for seat in infos])
    seats: dict[int, BotSeat] = {}
    try:
        for info, bot in zip(infos, bots, strict=True):
            if bot is None:
                raise LookupError(f"bot {info['bot_id']} of seat {info['seat']} is not "
                                  "registered")
            deadline_ms = seat_deadline_ms(match, info["seat"])
            if bot.get("language"):
                seats[info["seat"]] = await _hosted_seat(context, match, info, bot)
            else:
                seats[info["seat"]] = PushSeat(
                    version_url(bot, info.get("version")), deadline_ms, bot_id=bot["id"],
                    name=bot["name"], secret=bot.get("secret", ""),
                    allowlist=context.config.bot_hosts, updates=bot.get("updates", False),
                    kept=context.kept)
        await asyncio.gather(*(seat.start() for seat in seats.values()
                               if isinstance(seat, hosted.HostedSeat)))
    except BaseException:
        _close_seats(context, seats)
        raise
    return seats


async def _hosted_seat(context: Context, match: dict[str, Any], info: dict[str, Any],
                       bot: dict[str, Any]) -> hosted.HostedSeat:
    """A hosted bot's seat, running its version's build (one that is not ready, or a
    worker that runs no hosted bots, makes every decision of the seat a crash)."""
    version = info.get("version") or bot.get("version", 1)
    build: hosted.Build | str = "this worker runs no hosted bots (referee worker --hosted does)"
    if context.sandbox is not None:
        build = await context.in_thread(
            build_cache.check_out, context.store, build_cache.cache_root(context.config.hosted_dir),
            bot["id"], version, build_cache.Bounds.of(context.config))

    async def keep_stderr(text: bytes) -> None:
        await context.in_thread(context.store.add_stderr, match["id"], info["seat"], text)

    return hosted.HostedSeat(bot, seat_deadline_ms(match, info["seat"]), build,
                             context.sandbox or Limits(), keep_stderr)


def _seat_infos(match: dict[str, Any]) -> list[SeatInfo]:
    """What the replay records of each seat, as `Seat.info()` gives it, with the version
    of its bot a bot seat plays."""
    infos: list[SeatInfo] = []
    for seat in match["seats"]:
        info: SeatInfo = {"kind": seat["kind"], "bot_id": seat.get("bot_id"),
                          "name": seat["name"],
                          "deadline_ms": seat_deadline_ms(match, seat["seat"])}
        if "version" in seat:
            info["version"] = seat["version"]
        infos.append(info)
    return infos


def _close_seats(context: Context, seats: dict[int, BotSeat]) -> None:
    """Close the push seats in the background, each once its queued updates are sent."""
    for seat in seats.values():
        _in_background(context, seat.aclose_after_updates())
    seats.clear()


def _in_background(context: Context, work: Awaitable[None]) -> None:
    task = asyncio.ensure_future(work)
    context.background.add(task)
    task.add_done_callback(context.background.discard)


def _send_updates(play: MatchPlay, seats: dict[int, BotSeat]) -> None:
    """Tell the push bots that asked for updates of the step just recorded (issue 26)."""
    if not any(seat.updates for seat in seats.values()):
        return  # most bots ask for none: the seats to tell are not even worked out
    for seat in play.update_seats():
        if seat in seats and seats[seat].updates:
            seats[seat].update(play.update(seat))


def _send_result_notices(context: Context, record: Record, log_index: int,
                         seats: dict[int, BotSeat]) -> None:
    """Tell each push bot how its match ended (design.md 5c) and where its record is in
    the results log, in the background, on the seat's own kept-alive connection; each
    notice's task closes its seat, so the seats are handed over (`seats` is left empty)."""
    base = context.config.public_url.rstrip("/")
    for seat, push in seats.items():
        notice = {"protocol": PROTOCOL, "type": "result", "match_id": record["match_id"],
                  "game": record["game"], "seat": seat, "result": record["result"],
                  "replay_url": f"{base}/matches/{record['match_id']}/replay",
                  "log": {"index": log_index}}
        _in_background(context, _notify(push, notice))
    seats.clear()


async def _notify(seat: BotSeat, notice: dict[str, Any]) -> None:
    try:
        await seat.notify(notice)
    finally:
        await seat.aclose()


def _duration_ms(record: Record) -> float:
    """From the match's first start to its end (a resumed match included)."""
    started_at, finished_at = record["started_at"], record["finished_at"]
    if finished_at is None:
        raise ValueError(f"match {record['match_id']} has no end: it is not finished")
    started, finished = (datetime.fromisoformat(at.replace("Z", "+00:00"))
                         for at in (started_at, finished_at))
    return round((finished - started).total_seconds() * 1000, 3)


def _log_fault(match_id: str, bot: str, entry: StepRecord, fault: str) -> None:
    log.warning("seat %d: %s fault", entry["seat"], fault, extra={
        "match_id": match_id, "bot_id": bot, "step": entry["step"], "fault": fault,
        "duration_ms": entry["elapsed_ms"]})


def _seated_bots(match: dict[str, Any]) -> list[str]:
    return [seat["bot_id"] for seat in match["seats"] if seat["kind"] == "bot"]


def _summary(match_id: str, status: str, result: Result | None = None) -> dict[str, Any]:
    return {"match_id": match_id, "status": status, **({"result": result} if result else {})}
