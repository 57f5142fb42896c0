"""The rq match job: plays one stored match on a worker and records its replay in Redis.

The job's only argument is a JSON payload `{"match_id": "..."}` (rq's JSON serializer,
no Python-only format); everything else is read from the store. The job is idempotent: a match
already finished is not played again, and a match whose earlier attempt died is replayed
from the start (its partial steps are discarded).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

import redis
import rq
from rq import Callback
from rq.serializers import JSONSerializer

from referee import metrics, replay
from referee.botclient import RAW_LIMIT, BotReply, Fault, elapsed_ms
from referee.config import Config
from referee.runner import FailurePolicy, PushSeat, Seat, run_match

from . import results
from .lease import MatchLease
from .store import MATCH_QUEUE, MatchStatus, Store, seat_deadline_ms

log = logging.getLogger(__name__)

JOB_FUNCTION = "tournament.jobs.play_match"
FAILURE_CALLBACK = "tournament.recovery.on_job_failure"
BOT_MATCH_TIMEOUT_S = 3600
PULL_MATCH_TIMEOUT_S = 86400
SLOT_POLL_S = 0.1


class PullSeat:
    """A seat whose client polls the API: waits for the move it posts through Redis."""

    def __init__(self, store: Store, match_id: str, seat: int, deadline_ms: int, name: str):
        self.store = store
        self.match_id = match_id
        self.seat = seat
        self.deadline_ms = deadline_ms
        self.name = name

    def info(self) -> dict:
        return {"kind": "pull", "bot_id": None, "name": self.name,
                "deadline_ms": self.deadline_ms}

    def decide(self, payload: dict) -> BotReply:
        """The move posted for this step; moves posted for other steps are dropped."""
        started = time.monotonic()
        deadline = started + self.deadline_ms / 1000
        while (remaining := deadline - time.monotonic()) > 0:
            move = self.store.next_move(self.match_id, self.seat, remaining)
            if move is None:
                break
            if move["step"] == payload["step"]:
                raw = replay.canonical(move["action"]).decode()[:RAW_LIMIT]
                return BotReply(action=move["action"], fault=None, raw=raw,
                                elapsed_ms=elapsed_ms(started))
        return BotReply(action=None, fault=Fault.TIMEOUT, raw="", elapsed_ms=elapsed_ms(started),
                        detail=f"the client of seat {self.seat} did not move within "
                               f"{self.deadline_ms} ms")

    def close(self) -> None:
        """Nothing to release: the store's connection belongs to the worker."""


def match_queue(store: Store) -> rq.Queue:
    return rq.Queue(MATCH_QUEUE, connection=store.redis, serializer=JSONSerializer)


def job_id(match_id: str, attempt: int = 0) -> str:
    """The rq job of one attempt at a match (attempts after the first follow a dead worker)."""
    return f"match-{match_id}" if attempt == 0 else f"match-{match_id}-{attempt}"


def enqueue_match(store: Store, match: dict, attempt: int = 0,
                  pipeline: redis.client.Pipeline | None = None) -> rq.job.Job:
    """Queue the match job (on `pipeline`, which the caller executes, when given); its id
    is derived from the match id and the attempt, so each attempt is queued once. rq calls
    `FAILURE_CALLBACK` when the job fails or its worker is found dead
    (tournament.recovery)."""
    has_pull_seat = any(seat["kind"] == "pull" for seat in match["seats"])
    job = match_queue(store).enqueue(
        JOB_FUNCTION, {"match_id": match["id"]},
        job_id=job_id(match["id"], attempt), on_failure=Callback(FAILURE_CALLBACK),
        job_timeout=PULL_MATCH_TIMEOUT_S if has_pull_seat else BOT_MATCH_TIMEOUT_S,
        result_ttl=86400, failure_ttl=7 * 86400,
        description=f"{match['game']} match {match['id']}", pipeline=pipeline,
    )
    metrics.record_match_status(pipeline or store.redis, match["game"], MatchStatus.QUEUED)
    return job


def play_match(payload: dict) -> dict:
    """The rq entry point; the worker's own Redis connection reaches the store, and the
    replay is signed with the worker's REFEREE_SECRET. The job of an attempt superseded
    after its worker was found dead (tournament.recovery) plays nothing."""
    job = rq.get_current_job()
    store = Store(job.connection)
    match_id = payload["match_id"]
    attempt = store.current_attempt(match_id)
    if job.id != job_id(match_id, attempt):
        return _superseded(job.id, match_id)
    config = Config.from_env()
    with MatchLease(store, match_id, holder=job.id), \
            bot_slots(store, match_id, config.bot_max_matches):
        return play_stored_match(store, match_id, config.secret, attempt)


@contextmanager
def bot_slots(store: Store, match_id: str, cap: int) -> Iterator[None]:
    """Hold one of each seated bot's `cap` concurrent-match slots while the match plays
    (REFEREE_BOT_MAX_MATCHES). Over the cap the match stays queued and its job waits here,
    on its worker, until a slot frees; a dead worker's slots free with its lease."""
    match = store.get_match(match_id)
    bot_ids = _seated_bots(match) if match else []
    while bot_ids and not store.take_bot_slots(match_id, bot_ids, cap):
        time.sleep(SLOT_POLL_S)
    try:
        yield
    finally:
        store.release_bot_slots(match_id, bot_ids)


def play_stored_match(store: Store, match_id: str, secret: str = "",
                      attempt: int | None = None) -> dict:
    """Play the stored match to its end and store its sealed replay; returns a summary.

    `attempt` (default: the current one) guards the final write: when the match was
    queued again while this attempt played (its worker was presumed dead), the store
    refuses its replay and its outcome, and the later attempt's ones stand."""
    attempt = store.current_attempt(match_id) if attempt is None else attempt
    match = store.get_match(match_id)
    if match is None:
        raise LookupError(f"no match {match_id}")
    if match["status"] == MatchStatus.FINISHED:
        results.count_outcome(store, match)  # in case an earlier attempt died before counting
        return _summary(match_id, match["result"])
    store.mark_running(match_id, replay.utc_now())
    metrics.record_match_status(store.redis, match["game"], MatchStatus.RUNNING)
    started = time.monotonic()
    try:
        record = _play(store, match, secret)
    except Exception:
        log.exception("match %s could not be played", match_id, extra={"match_id": match_id})
        if store.fail_match(match_id, "the match stopped on an internal error (see the "
                            "worker log)", replay.utc_now(), attempt):
            metrics.record_match_status(store.redis, match["game"], MatchStatus.FAILED)
            results.count_failed(store, match_id)
        raise
    if not store.finish_match(match_id, record, replay.canonical(record), attempt):
        return _superseded(f"attempt {attempt}", match_id)
    metrics.record_match_status(store.redis, match["game"], MatchStatus.FINISHED)
    log.info("match finished", extra={"match_id": match_id, "steps": len(record["steps"]),
                                      "duration_ms": elapsed_ms(started)})
    results.count_finished(store, match_id)
    return _summary(match_id, record["result"])


def _play(store: Store, match: dict, secret: str) -> dict:
    seats = _build_seats(store, match)
    recorder = _Recorder(store, match)
    try:
        return run_match(match["game"], match["seed"], match["options"], seats,
                         FailurePolicy.from_dict(match["policy"]), match["id"],
                         on_step=recorder.on_step, on_state=recorder.on_state, secret=secret)
    finally:
        for seat in seats:
            seat.close()


class _Recorder:
    """Writes each step and each new state to the store while the match is played: the
    runner reports a step, then the state after it, and both go out in one round trip."""

    def __init__(self, store: Store, match: dict):
        self.store = store
        self.match_id = match["id"]
        self.game = match["game"]
        self.bots = [seat.get("bot_id") or metrics.PULL_SEAT for seat in match["seats"]]
        self.pull_seats = {seat["seat"] for seat in match["seats"] if seat["kind"] == "pull"}
        self.pull_step: int | None = None
        self.pending_step: dict | None = None

    def on_step(self, entry: dict) -> None:
        self.pending_step = entry
        self.observe(entry)
        self.pull_step = entry["step"] if entry["seat"] in self.pull_seats else None

    def observe(self, entry: dict) -> None:
        """Count the decision in the cluster's metrics; log a fault."""
        bot, fault = self.bots[entry["seat"]], (entry["fault"] or {}).get("code")
        with self.store.redis.pipeline(transaction=False) as pipe:
            metrics.record_decision(pipe, self.game, bot, entry["elapsed_ms"] / 1000, fault)
            pipe.execute()
        if fault:
            log.warning("seat %d: %s fault", entry["seat"], fault, extra={
                "match_id": self.match_id, "bot_id": bot, "step": entry["step"],
                "fault": fault, "duration_ms": entry["elapsed_ms"]})

    def on_state(self, step: int, state: dict, to_move: int | None) -> None:
        self.store.publish_live(self.match_id, step, state, to_move,
                                applied_step=self.pull_step, new_step=self.pending_step)
        self.pull_step = None
        self.pending_step = None


def _build_seats(store: Store, match: dict) -> list[Seat]:
    bot_ids = _seated_bots(match)
    bots = dict(zip(bot_ids, store.get_bots(bot_ids), strict=True))
    seats: list[Seat] = []
    for seat in match["seats"]:
        if seat["kind"] == "pull":
            seats.append(PullSeat(store, match["id"], seat["seat"],
                                  seat_deadline_ms(match, seat["seat"]), seat["name"]))
            continue
        bot = bots[seat["bot_id"]]
        if bot is None:
            raise LookupError(f"bot {seat['bot_id']} of seat {seat['seat']} is not registered")
        seats.append(PushSeat(bot["url"], seat_deadline_ms(match, seat["seat"]),
                              bot_id=bot["id"], name=bot["name"]))
    return seats


def _seated_bots(match: dict) -> list[str]:
    """The bot ids of the match's push seats, in seat order."""
    return [seat["bot_id"] for seat in match["seats"] if seat["kind"] == "bot"]


def _superseded(attempt: str, match_id: str) -> dict:
    log.warning("%s of match %s was superseded by a later attempt", attempt, match_id)
    return {"match_id": match_id, "status": "superseded"}


def _summary(match_id: str, result: dict) -> dict:
    return {"match_id": match_id, "status": MatchStatus.FINISHED.value, "result": result}
