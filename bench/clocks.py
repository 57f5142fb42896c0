"""Clocks (issue 26): referee-caused time losses at 100 matches at once on one worker, with
bots that use 95% of every decision's `deadline_ms`; and the CPU cost of an update.
Goals: no time loss the referee caused; an update costs at most 0.5 ms of referee CPU.

    python3 bench/clocks.py [--decisions 100000] [--concurrency 100] [--quick]

Part 1. One redis-server, one `referee worker` (REFEREE_WORKER_CONCURRENCY=100), four bot
processes (`tests.support.timed_bot --fraction 0.95`: single-threaded asyncio, each answer
sent 95% of `deadline_ms` after the request arrived, as its kernel dated it). Aladino
2-player matches on a 2000+100 ms clock under the "random" failure policy (a time loss
does not end the match), queued at once, until about `--decisions` decisions. A timeout is
referee-caused when the bot, by its own kernel-dated clock, had its answer sent (its
write returned) within its 95% (+1 ms); otherwise the bot woke up late itself (on a loaded
2-core machine it is preempted for ms at a time) and the loss is its own.
Part 2. The CPU this process spends per update: the update built from a real match state
(`MatchPlay.update`), queued, written to a bot in another process and its answer read.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import _support
import orjson

import engines
from engines.rng import Rng
from referee.match.botclient import BotClient, BotReply
from referee.match.clock import TimeControl
from referee.match.runner import FailurePolicy, MatchPlay
from referee.processes import python_module, stop_all
from referee.redis_server import free_port
from tournament.store import MatchStatus, Store, bot_seats, new_match_meta
from tournament.wakeups import enqueue_match

CLOCK = TimeControl(2000, 100)
FRACTION = 0.95
BOT_PROCESSES = 4
GAME = "aladino"


def start_timed_bot(log: Path) -> tuple[str, object]:
    port = free_port()
    process = _support.start([sys.executable, "-m", "tests.support.timed_bot", "--port",
                              str(port), "--fraction", str(FRACTION), "--log", str(log)], port)
    return f"http://127.0.0.1:{port}/", process


def queue_matches(store: Store, count: int) -> list[str]:
    engine = engines.get(GAME)
    policy = FailurePolicy.uniform("random", strike_limit=None).to_dict()
    ids = []
    for seed in range(count):
        bots = [(f"timed-{seed % BOT_PROCESSES}-{seat}", f"timed {seat}") for seat in range(2)]
        meta = new_match_meta(engine.name, engine.version, bot_seats(bots),
                              engine.normalize_options(2, {}), seed, policy, 2000, 2000,
                              time_control=CLOCK.to_dict())
        state = engine.new_game(2, seed, {})
        store.create_match(meta, state, engine.current_seat(state), {})
        enqueue_match(store, meta)
        ids.append(meta["id"])
    return ids


def wait_finished(store: Store, ids: list[str], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    pending = list(ids)
    while pending:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(pending)} matches unfinished after {timeout_s:g} s")
        time.sleep(1)
        done = {MatchStatus.FINISHED.value, MatchStatus.FAILED.value}
        pending = [m["id"] for m in store.get_matches(pending) if m["status"] not in done]


def time_losses(decisions_wanted: int, concurrency: int) -> None:
    """Part 1: (decisions, referee-caused losses, bot-caused losses)."""
    matches = max(2, decisions_wanted // 34)  # an aladino match is about 34 decisions
    with tempfile.TemporaryDirectory(prefix="bench-clocks-") as folder, \
            _support.redis_server() as server:
        logs = [Path(folder) / f"bot{n}.jsonl" for n in range(BOT_PROCESSES)]
        bots = [start_timed_bot(log) for log in logs]
        store = Store.from_url(server.url)
        for n, (url, _) in enumerate(bots):
            for seat in range(2):
                store.save_bot({"id": f"timed-{n}-{seat}", "name": f"timed {n}.{seat}",
                                "url": url, "games": [GAME]})
        env = _support.child_env(REDIS_URL=server.url, REFEREE_SECRET="bench",
                                 REFEREE_WORKER_CONCURRENCY=str(concurrency),
                                 REFEREE_BOT_MAX_MATCHES=str(matches))
        worker = _support.start(python_module("referee.cli", "worker"), env=env)
        started = time.perf_counter()
        try:
            _support.wait_workers(store.redis, 1)
            ids = queue_matches(store, matches)
            wait_finished(store, ids, timeout_s=60 + matches * 2)
        finally:
            stop_all([worker, *(process for _, process in bots)])
        seconds = _support.elapsed(started)
        asked = {}
        for log in logs:
            for line in log.read_bytes().splitlines():
                decision = orjson.loads(line)  # only what is needed of it is kept
                asked[(decision["match_id"], decision["step"])] = {
                    "deadline_ms": decision["deadline_ms"], "bot_ms": decision["bot_ms"]}
        steps = referee_caused = bot_caused = 0
        unsent: list[str] = []
        for match_id in ids:
            record = store.get_replay(match_id)
            for step in record["steps"]:
                steps += 1
                if step["fault"] is None or step["fault"]["code"] != "timeout":
                    continue
                sent = asked.get((match_id, step["step"]))
                if sent is None:  # never reached the bot
                    unsent.append(step["fault"]["detail"])
                    continue
                times = sent["bot_ms"]  # the answer was in the referee's socket by `sent`
                own_ms = (times["sent"] or times["answered"]) - times["arrived"]
                if own_ms <= sent["deadline_ms"] * FRACTION + 1:
                    referee_caused += 1
                else:
                    bot_caused += 1
    if unsent:
        print(f"{len(unsent)} timeouts of decisions that never reached the bot: {unsent[:3]}")
    per = 100_000 / steps
    print(f"{'matches':>7} {'at once':>7} {'decisions':>9} {'seconds':>7} "
          f"{'referee-caused':>14} {'per 100k':>8} {'bot-caused':>10}  load")
    print(f"{matches:>7} {concurrency:>7} {steps:>9} {seconds:>7.1f} {referee_caused:>14} "
          f"{referee_caused * per:>8.1f} {bot_caused:>10}  {_support.load()}")


def update_cost(updates: int) -> None:
    """Part 2: the CPU ms this process spends per update sent."""
    with tempfile.TemporaryDirectory(prefix="bench-updates-") as folder:
        url, process = start_timed_bot(Path(folder) / "bot.jsonl")
        try:
            plays = _played_matches()
            spent = asyncio.run(_send_updates(url, plays, updates))
        finally:
            stop_all([process])
    print(f"{'updates':>7} {'CPU ms/update':>13}  load")
    print(f"{updates:>7} {spent * 1000 / updates:>13.3f}  {_support.load()}")


def _played_matches() -> list[MatchPlay]:
    """Aladino matches 4 players, on a clock, stopped at every step from 0 to 60: the
    states updates are made of."""
    plays = []
    for stop in range(0, 60, 3):
        play = MatchPlay.start(GAME, stop, {}, [{"kind": "bot", "bot_id": None, "name": "x",
                                                 "deadline_ms": 2000}] * 4,
                               FailurePolicy(), f"m-cost-{stop}", time_control=CLOCK)
        rng = Rng(stop)
        while play.step <= stop and play.to_move is not None:
            seat = play.to_move
            legal = play.engine.legal_actions(play.state)
            play.advance(seat, BotReply(rng.choice(legal), None, "", 5.0), legal)
        plays.append(play)
    return plays


async def _send_updates(url: str, plays: list[MatchPlay], updates: int) -> float:
    """CPU seconds of this process to build and send `updates` updates, answers read."""
    client = BotClient(url)
    try:
        await client.decide({"deadline_ms": 5000, "type": "warm-up"})  # the connection
        started = time.process_time()
        for n in range(updates):
            play = plays[n % len(plays)]
            client.update(play.update(n % 4))
            if n % 50 == 49 or n == updates - 1:  # the queue kept short, as in a match
                await _sent(client)
        return time.process_time() - started
    finally:
        await client.aclose()


async def _sent(client: BotClient) -> None:
    if client.sender is not None:
        await asyncio.wait([client.sender])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--decisions", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--updates", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.decisions, args.concurrency, args.updates = 400, 10, 500
    _support.header(f"clocks: {args.concurrency} matches at once, bots using "
                    f"{FRACTION:.0%} of each deadline; the CPU of an update",
                    "0 referee-caused time losses per 100,000 decisions; <= 0.5 CPU ms "
                    "per update")
    time_losses(args.decisions, args.concurrency)
    update_cost(args.updates)


if __name__ == "__main__":
    main()
