"""Where a decision's worker CPU goes: the driver's Python work on a warm core, and the same
work after the thread has been idle, as a worker's is between its bots' answers (issue 31).

    python3 bench/decision_cost.py [--matches 300] [--seats 2] [--quick]

`bench/execution.py` counts every worker process's CPU per decision through the real stack
(sockets, Redis, rq, 20 ms bots). This script takes the stack away to show what that figure
is made of:

1. The Python work of a decision, in-process, on a warm core: the decision request with
   its observation (`MatchPlay.payload`), the request's body and `Referee-Signature`, the
   answer judged (`judge_answer`), the step judged, applied and recorded
   (`MatchPlay.advance`), and per match its start and its seal (`MatchPlay.finish`, Ed25519),
   spread over its decisions. The bot is a seeded random choice among the legal actions.
   What this leaves out: the exchange's sockets and parsing, the step's Redis script, rq,
   counting.
2. The same work (a decision's request and step) done after the thread sleeps 0, 1 and
   20 ms each time: on a machine shared with the bots and Redis (and, on a VM, the host's
   other guests), a thread that wakes finds its caches filled by whatever ran meanwhile,
   and the same instructions cost more. A worker waiting on 20 ms bots wakes about once
   per decision (`bench/execution.py`'s workers: 0.6-1.0 voluntary and 1.3-1.9
   involuntary context switches per decision, docs/performance.md section 10).
3. The bot exchange, the referee's side (`BotClient.decide`: the request written and
   signed, the answer read, timed and judged) against `bench/slow_bot.py` answering after
   20 ms, with 1, 10 and 40 exchanges in flight at once on one event loop: the more a
   loop has in flight, the more answers each wake-up finds, and the less each costs.

Time is the thread's CPU time, around the work only: `time.thread_time_ns` in 1 and 2,
`getrusage(RUSAGE_THREAD)` in 3 (its user/sys split is the kernel's, sampled at ticks).
"""

import argparse
import asyncio
import random
import resource
import time
from collections import Counter
from collections.abc import Callable, Iterator

import _support
import orjson

from engines.errors import InvalidSetup
from referee.match.botclient import BotClient, judge_answer
from referee.match.replay import SeatInfo
from referee.match.runner import FailurePolicy, MatchPlay
from referee.match.sealing import Sealer
from referee.match.signing import RequestSigner
from referee.processes import stop_all

GAME = "aladino"
DEADLINE_MS = 2000
IDLE_MS = (0, 1, 20)
IN_FLIGHT = (1, 10, 40)
BOT_DELAY_MS = 20.0
PARTS = ("request (payload)", "step (advance)", "body + signature", "seal (finish)",
         "start", "answer judged")


def new_match(seed: int, seats: int) -> MatchPlay:
    infos: list[SeatInfo] = [{"kind": "bot", "bot_id": f"bot-{seat}", "name": f"bot-{seat}",
                              "deadline_ms": DEADLINE_MS} for seat in range(seats)]
    return MatchPlay.start(GAME, seed, {}, infos, FailurePolicy(), f"bench-{seed}")


def answer(chooser: random.Random, payload: dict) -> bytes:
    """A random bot's answer to a decision request."""
    return orjson.dumps({"action": chooser.choice(payload["legal_actions"])})


def warm_parts(matches: int, seats: int, sealer: Sealer) -> tuple[int, Counter]:
    """(decisions, CPU ns per part) over `matches` whole matches played back to back."""
    clock, spent, decisions = time.thread_time_ns, Counter[str](), 0
    chooser, signer, timestamp = random.Random(0), RequestSigner("bench"), int(time.time())
    for seed in range(matches):
        started = clock()
        play = new_match(seed, seats)
        spent["start"] += clock() - started
        while (seat := play.to_move) is not None:
            t0 = clock()
            payload = play.payload(seat, DEADLINE_MS)
            t1 = clock()
            body = orjson.dumps(payload)
            signer.header(body, timestamp)
            t2 = clock()
            raw = answer(chooser, payload)
            t3 = clock()
            reply = judge_answer(raw, raw.decode(), 20.0)
            t4 = clock()
            play.advance(seat, reply, payload["legal_actions"])
            t5 = clock()
            spent["request (payload)"] += t1 - t0
            spent["body + signature"] += t2 - t1
            spent["answer judged"] += t4 - t3
            spent["step (advance)"] += t5 - t4
            decisions += 1
        started = clock()
        play.finish(sealer)
        spent["seal (finish)"] += clock() - started
    return decisions, spent


def decisions_forever(seats: int) -> Iterator[Callable[[], None]]:
    """One decision's request and step at a time, over match after match."""
    chooser = random.Random(1)
    for seed in range(10**9):
        play = new_match(seed, seats)
        while play.to_move is not None:
            def decide(play: MatchPlay = play) -> None:
                seat = play.to_move
                assert seat is not None
                payload = play.payload(seat, DEADLINE_MS)
                raw = answer(chooser, payload)
                play.advance(seat, judge_answer(raw, raw.decode(), 20.0),
                             payload["legal_actions"])
            yield decide


def after_idle(idle_ms: float, decisions: int, seats: int) -> float:
    """Mean CPU us of a decision's request and step when the thread sleeps `idle_ms`
    before each."""
    work = decisions_forever(seats)
    for _ in range(50):  # warm up: imports, caches of the engine's tables
        next(work)()
    spent = 0
    for _ in range(decisions):
        decide = next(work)
        if idle_ms:
            time.sleep(idle_ms / 1000)
        started = time.thread_time_ns()
        decide()
        spent += time.thread_time_ns() - started
    return spent / decisions / 1000


async def exchanges(url: str, payload: dict, in_flight: int, each: int) -> tuple[float, float]:
    """(user, sys) CPU us of the loop's thread per `BotClient.decide`, `in_flight` clients
    deciding `each` times at once."""
    clients = [BotClient(url, DEADLINE_MS, secret="bench") for _ in range(in_flight)]

    async def decide(client: BotClient, times: int) -> None:
        for _ in range(times):
            reply = await client.decide(payload)
            if reply.fault is not None:
                raise RuntimeError(f"the bench bot failed: {reply.detail}")

    await asyncio.gather(*(decide(client, 3) for client in clients))  # connected, warm
    before = resource.getrusage(resource.RUSAGE_THREAD)
    await asyncio.gather(*(decide(client, each) for client in clients))
    after = resource.getrusage(resource.RUSAGE_THREAD)
    for client in clients:
        await client.aclose()
    count = in_flight * each
    return ((after.ru_utime - before.ru_utime) / count * 1e6,
            (after.ru_stime - before.ru_stime) / count * 1e6)


def exchange_costs(seats: int, quick: bool) -> dict[int, tuple[float, float]]:
    url, bot = _support.start_slow_bot(BOT_DELAY_MS)
    play = new_match(0, seats)
    seat = play.to_move
    assert seat is not None
    payload = play.payload(seat, DEADLINE_MS)
    try:
        return {in_flight: asyncio.run(exchanges(url, payload, in_flight,
                                                 (3 if quick else 4000) // in_flight + 1))
                for in_flight in IN_FLIGHT}
    finally:
        stop_all([bot])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=300)
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="a few matches: a smoke run")
    args = parser.parse_args()
    if args.matches < 1:
        parser.error("--matches must be at least 1")
    try:
        new_match(0, args.seats)
    except InvalidSetup as error:
        parser.error(f"--seats: {error}")
    matches = 3 if args.quick else args.matches
    idle_decisions = 20 if args.quick else 400
    sealer = Sealer.from_key_file(_support.key_file())
    print(f"{GAME}, {args.seats} seats, {matches} matches; {_support.load()}")
    warm_parts(1, args.seats, sealer)  # imports, the engine's tables, the first signature
    decisions, spent = warm_parts(matches, args.seats, sealer)
    total = sum(spent.values())
    print(f"1. warm, in-process: {total / decisions / 1000:.1f} us a decision "
          f"({decisions} decisions)")
    for part in PARTS:
        print(f"   {part:20s} {spent[part] / decisions / 1000:6.1f} us")
    print("2. a decision's request and step after the thread idles:")
    costs = {idle: after_idle(idle, idle_decisions, args.seats) for idle in IDLE_MS}
    for idle, cost in costs.items():
        print(f"   idle {idle:2d} ms before each: {cost:6.1f} us  "
              f"(x{cost / costs[0]:.1f} warm)")
    print(f"3. the bot exchange, the referee's side, a {BOT_DELAY_MS:.0f} ms bot:")
    for in_flight, (user, system) in exchange_costs(args.seats, args.quick).items():
        print(f"   {in_flight:2d} in flight: {user + system:6.1f} us a decision "
              f"(user {user:.1f}, sys {system:.1f})")
    print("goal: <= 500 us of worker CPU a decision in bench/execution.py (issue 31); "
          f"the Python work here is {total / decisions / 1000:.0f} us warm")


if __name__ == "__main__":
    main()
