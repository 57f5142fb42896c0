"""Finished matches made quickly for the export tests (issue 30): played in this process by
seeded random choosers (`referee.match.runner.MatchPlay`, no HTTP), sealed, and stored as a
driver stores them (the results log included), or written as export records without Redis."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import orjson

import engines
from referee.match.botclient import BotReply, Fault
from referee.match.decisions import MatchRecords, decisions
from referee.match.replay import Record
from referee.match.runner import FailurePolicy, MatchPlay
from tests.support.apitest import sealer_of_tests, store_finished
from tournament.store import Store, new_match_meta

Chooser = Callable[[random.Random, int, list[dict]], BotReply]


def random_move(rng: random.Random, step: int, legal: list[dict]) -> BotReply:
    return BotReply(rng.choice(legal), None, "", 1.0)


def keeping_the_log(rng: random.Random, step: int, legal: list[dict]) -> BotReply:
    """A random move from a bot that keeps the log (`"log": "new"`, docs/bots.md)."""
    return BotReply(rng.choice(legal), None, "", 1.0, log_new=True)


def malformed_at(bad_steps: set[int]) -> Chooser:
    """A random chooser answering an action of no game (malformed) at `bad_steps`."""

    def choose(rng: random.Random, step: int, legal: list[dict]) -> BotReply:
        if step in bad_steps:
            return BotReply({"type": "no_such_move"}, None, "{}", 1.0)
        return random_move(rng, step, legal)

    return choose


def silent_at(step_to_forfeit: int) -> Chooser:
    """A random chooser that times out at `step_to_forfeit`."""

    def choose(rng: random.Random, step: int, legal: list[dict]) -> BotReply:
        if step == step_to_forfeit:
            return BotReply(None, Fault.TIMEOUT, "", 1000.0)
        return random_move(rng, step, legal)

    return choose


def bot_seat(bot_id: str | None, version: int = 1) -> dict:
    """A seat as a record keeps it: a bot at a version, or (None) a pull seat."""
    if bot_id is None:
        return {"kind": "pull", "bot_id": None, "name": "person", "deadline_ms": 1000}
    return {"kind": "bot", "bot_id": bot_id, "name": bot_id, "deadline_ms": 1000,
            "version": version}


def play(game: str, seed: int, seats: list[dict], match_id: str, *,
         options: dict | None = None, policy: FailurePolicy | None = None,
         choose: Chooser = random_move, finished_at: str | None = None,
         version: str | None = None) -> Record:
    """A whole match played here by `choose`, sealed with the tests' key."""
    return play_keeping(game, seed, seats, match_id, options=options, policy=policy,
                        choose=choose, finished_at=finished_at, version=version)[0]


def play_keeping(game: str, seed: int, seats: list[dict], match_id: str, *,
                 options: dict | None = None, policy: FailurePolicy | None = None,
                 choose: Chooser = random_move, finished_at: str | None = None,
                 version: str | None = None) -> tuple[Record, bytes | None]:
    """`play`, and the decisions its driver kept (`MatchPlay.kept_decisions`)."""
    match = MatchPlay.start(game, seed, options or {}, seats, policy or FailurePolicy(),
                            match_id, version=version, keep_decisions=True)
    rng = random.Random(seed)
    while (seat := match.to_move) is not None:
        payload = match.payload(seat, 1000)
        match.advance(seat, choose(rng, match.step, payload["legal_actions"]),
                      payload["legal_actions"])
    return match.finish(sealer_of_tests(), finished_at), match.kept_decisions()


def create(store: Store, record: Record, deal_siblings: list[str] | None = None) -> None:
    """Store the match of `record` as `POST /matches` would have, still queued."""
    engine = engines.get(record["game"], record["game_version"])
    seats = [{key: value for key, value in seat.items() if key != "deadline_ms"}
             for seat in record["seats"]]
    tags = {} if deal_siblings is None else {"deal_siblings": deal_siblings}
    meta = new_match_meta(record["game"], record["game_version"], seats, record["options"],
                          record["seed"], record["policy"], 1000, 1000,
                          match_id=record["match_id"], **tags)
    state = engine.new_game(record["num_players"], record["seed"], record["options"])
    store.create_match(meta, state, engine.current_seat(state), {})


def finish(redis_url: str, record: Record, kept: bytes | None = None) -> None:
    """Store the created match as finished with `record` (its result logged), and its
    driver's `kept` decisions when given."""
    store_finished(redis_url, record["match_id"], record, kept)


def store_played(store: Store, redis_url: str, record: Record,
                 deal_siblings: list[str] | None = None, kept: bytes | None = None) -> Record:
    create(store, record, deal_siblings)
    finish(redis_url, record, kept)
    return record


def write_ndjson(path: Path, records: list[Record]) -> None:
    """The export records of every decision of `records`, as `referee export` writes them."""
    with path.open("wb") as out:
        for record in records:
            head = MatchRecords.of(record)
            out.writelines(head.line(decision) for decision in decisions(record))


def read_ndjson(data: bytes) -> list[dict]:
    return [orjson.loads(line) for line in data.splitlines()]
