"""Referee overhead: wall time per decision of a match against the SDK random bot (a real
process on loopback), divided by the wall time of bare `requests.post` calls, on a kept-alive
Session, sending the same payloads to the same bot in the same run. Goal: at most 1.10.

    python3 bench/referee_overhead.py [--seconds 2] [--worker-matches 40] [--quick]

Two matches are measured:
- in-process: `referee.match.runner.run_match` with one `PushSeat` per seat, as `referee play`
  runs it: engine, observations, JSON, bot calls, state hashes, the sealed replay;
- on a worker: `referee worker` driving the matches with Redis recording (each step and
  the state after it written to Redis, the replay stored, the result counted); the time of
  a match is its stored finished_at - started_at. (`bench/execution.py` compares it with
  round 1's forking rq worker.)
The baseline posts, for each match, the very payloads that match sent (rebuilt from its
replay outside the timing), on one new `requests.Session` per match; a second, stricter
baseline uses a Session with `trust_env = False` (no proxy lookup per call, as the
referee's `BotClient` does).
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime

import _support
import orjson
import requests

import engines
from referee.match.runner import FailurePolicy, state_payload
from referee.processes import python_module, stop_all
from tournament.store import MatchStatus, Store
from tournament.wakeups import enqueue_match

GOAL = 1.10


def match_payloads(record: dict) -> list[bytes]:
    """The decision requests a finished match sent, rebuilt from its replay."""
    engine = engines.get(record["game"])
    state = engine.new_game(record["num_players"], record["seed"], record["options"])
    bodies = []
    for step in record["steps"]:
        seat = record["seats"][step["seat"]]
        payload = state_payload(engine, state, record["match_id"], step["seat"],
                                   step["step"], seat["deadline_ms"])
        bodies.append(orjson.dumps(payload))
        state = engine.apply(state, step["action"])
    return bodies


def bare_posts(url: str, bodies: list[bytes], trust_env: bool = True) -> float:
    """Seconds to POST every body on one kept-alive Session and read each answer.

    `trust_env=False`: a leaner Session that does not read the environment's proxy
    settings on every call, as `BotClient` does (the stricter baseline)."""
    started = time.perf_counter()
    with requests.Session() as session:
        session.trust_env = trust_env
        for body in bodies:
            response = session.post(url, data=body, timeout=10,
                                    headers={"Content-Type": "application/json"})
            response.content  # noqa: B018 - read the whole answer
    return _support.elapsed(started)


def in_process(url: str, seconds: float) -> tuple[float, float, float, int]:
    """Alternate matches and their baselines, `seconds` of matches per game variant."""
    print(f"\nin-process run_match ({seconds:g} s of matches per variant)")
    print(f"{'game':10} {'players':>7} {'decisions':>9} {'match us/dec':>12} "
          f"{'post us/dec':>11} {'ratio':>6} {'lean us/dec':>11} {'ratio':>6}  load")
    total_match = total_bare = total_lean = 0.0
    total_decisions = 0
    for name in engines.names():
        game = engines.get(name)
        for variant in game.variants():
            match_s = bare_s = lean_s = 0.0
            decisions = seed = 0
            while match_s < seconds:
                record, spent = _support.play_match(url, name, variant, seed)
                match_s += spent
                bodies = match_payloads(record)
                bare_s += bare_posts(url, bodies)
                lean_s += bare_posts(url, bodies, trust_env=False)
                decisions += len(record["steps"])
                seed += 1
            print(f"{name:10} {variant['num_players']:>7} {decisions:>9} "
                  f"{match_s / decisions * 1e6:>12.0f} {bare_s / decisions * 1e6:>11.0f} "
                  f"{match_s / bare_s:>6.3f} {lean_s / decisions * 1e6:>11.0f} "
                  f"{match_s / lean_s:>6.3f}  {_support.load()}")
            total_match += match_s
            total_bare += bare_s
            total_lean += lean_s
            total_decisions += decisions
    return total_match, total_bare, total_lean, total_decisions


def on_worker(url: str, matches: int, *worker_args: str) -> tuple[float, float, float, int]:
    """`matches` aladino 2-player matches, queued one at a time as `POST /matches` queues
    them, each played by one `referee worker [worker_args]` and followed by its baseline."""
    print(f"\nreferee worker {' '.join(worker_args)} with Redis recording ({matches} aladino "
          "2-player matches)")
    engine = engines.get("aladino")
    with _support.redis_server() as server:
        store = Store.from_url(server.url)
        for index in (1, 2):
            store.save_bot({"id": f"bench-{index}", "name": f"random {index}", "url": url,
                            "games": engines.names()})
        worker = _support.start(python_module("referee.cli", "worker", *worker_args),
                                env=_support.child_env(REDIS_URL=server.url,
                                                       REFEREE_SECRET="bench"))
        match_s = bare_s = lean_s = 0.0
        decisions = 0
        try:
            for seed in range(matches):
                meta = _support.bot_match_meta(
                    f"m-bench{seed:05d}", engine.name, engine.version,
                    [("bench-1", "random 1"), ("bench-2", "random 2")], seed,
                    engine.normalize_options(2, {}), FailurePolicy().to_dict(), deadline_ms=10000)
                state = engine.new_game(2, seed, {})
                store.create_match(meta, state, engine.current_seat(state), {})
                enqueue_match(store, meta)
                match = _wait_finished(store, meta["id"])
                match_s += _seconds_between(match["started_at"], match["finished_at"])
                record = store.get_replay(meta["id"])
                bodies = match_payloads(record)
                bare_s += bare_posts(url, bodies)
                lean_s += bare_posts(url, bodies, trust_env=False)
                decisions += len(record["steps"])
        finally:
            stop_all([worker])
    print(f"{'matches':>7} {'decisions':>9} {'match us/dec':>12} {'post us/dec':>11} "
          f"{'ratio':>6} {'lean us/dec':>11} {'ratio':>6}  load")
    print(f"{matches:>7} {decisions:>9} {match_s / decisions * 1e6:>12.0f} "
          f"{bare_s / decisions * 1e6:>11.0f} {match_s / bare_s:>6.3f} "
          f"{lean_s / decisions * 1e6:>11.0f} {match_s / lean_s:>6.3f}  {_support.load()}")
    return match_s, bare_s, lean_s, decisions


def _wait_finished(store: Store, match_id: str) -> dict:
    deadline = time.monotonic() + 60
    while (match := store.get_match(match_id))["status"] != MatchStatus.FINISHED:
        if time.monotonic() > deadline or match["status"] == MatchStatus.FAILED:
            raise RuntimeError(f"match {match_id} is {match['status']} after 60 s")
        time.sleep(0.01)
    return match


def _seconds_between(started_at: str, finished_at: str) -> float:
    return (datetime.fromisoformat(finished_at) - datetime.fromisoformat(started_at)
            ).total_seconds()


def summary(label: str, match_s: float, bare_s: float, lean_s: float, decisions: int) -> None:
    print(f"{label} overall: {decisions} decisions, ratio {match_s / bare_s:.3f} "
          f"(goal <= {GOAL}); against the lean Session {match_s / lean_s:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="seconds of in-process matches per game variant")
    parser.add_argument("--worker-matches", type=int, default=40)
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.worker_matches = 0.05, 2
    _support.header("referee overhead per decision against the SDK random bot",
                    f"match time / bare requests.post time <= {GOAL}")
    url, bot = _support.start_bot("bots.python.random_bot", "--seed", "1")
    try:
        summary("in-process", *in_process(url, args.seconds))
        summary("referee worker", *on_worker(url, args.worker_matches))
    finally:
        stop_all([bot])


if __name__ == "__main__":
    main()
