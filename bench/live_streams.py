"""Decision time of a match with and without 200 clients following it live
(`GET /matches/{id}/events`), against `referee serve` (gunicorn, gevent, its default 2
worker processes), one `referee worker` and a random bot that answers in 5 ms.
Goal: the clients slow the match by at most 10% (ratio <= 1.10).

    python3 bench/live_streams.py [--clients 200] [--matches 5] [--delay-ms 5] [--quick]

Each match (Aladino, two seats, the same seeds in both runs) is created queued; the clients
connect and each receives its `start` event; then `referee worker --burst` plays it. The
decision time is the match's wall time (started_at to finished_at of its replay) over its
steps; the bot's own delay is in it. Every client must receive every step, in order, and
the result: the script says how many did, and how long after the match ended the last one
had its `result`. The clients are raw asyncio sockets in this process (a thread).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import threading
import time
from datetime import datetime

import _support
import requests

from referee.processes import python_module, stop_all

GAME = "aladino"
ADMIN = "bench-admin"
GOAL_RATIO = 1.10
CONNECT_TIMEOUT_S = 60


class Watchers:
    """`count` clients on one match's stream, on an asyncio loop in a thread."""

    def __init__(self, port: int, match_id: str, count: int):
        self.port, self.path, self.count = port, f"/matches/{match_id}/events", count
        self.started = threading.Event()
        self.steps: list[list[int]] = []
        self.results_at: list[float] = []
        self.bytes = 0
        self._connected = 0
        self._thread = threading.Thread(target=lambda: asyncio.run(self._all()), daemon=True)

    def __enter__(self) -> Watchers:
        self._thread.start()
        if not self.started.wait(CONNECT_TIMEOUT_S):
            raise RuntimeError(f"only {self._connected} of {self.count} clients connected")
        return self

    def __exit__(self, *exc: object) -> None:
        self._thread.join(timeout=300)

    async def _all(self) -> None:
        await asyncio.gather(*(self._one() for _ in range(self.count)))

    async def _one(self) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(f"GET {self.path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                     "Accept: text/event-stream\r\n\r\n".encode())
        await writer.drain()
        steps: list[int] = []
        buffer, started = b"", False
        while True:
            chunk = await reader.read(1 << 16)
            if not chunk:
                break
            self.bytes += len(chunk)
            buffer += chunk
            *blocks, buffer = buffer.split(b"\n\n")
            for block in blocks:
                block = block[block.find(b"id: "):] if b"id: " in block else block
                if block.startswith(b"id: "):
                    steps.append(int(block[4:block.index(b"\n")]))
                elif b"event: start" in block and not started:
                    started = True
                    self._connected += 1
                    if self._connected == self.count:
                        self.started.set()
                elif b"event: result" in block:
                    self.results_at.append(time.time())
                    self.steps.append(steps)
                    writer.close()
                    return
        self.steps.append(steps)
        writer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--matches", type=int, default=5, help="matches per run")
    parser.add_argument("--delay-ms", type=float, default=5.0, help="the bot's time per move "
                        "(0: the instant random bot)")
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.clients, args.matches = 20, 1
    _support.header(f"decision time with {args.clients} live stream clients on the match",
                    f"ratio with/without <= {GOAL_RATIO:.2f}")
    with _support.redis_server() as server:
        port = _support.free_port()
        env = _support.child_env(REDIS_URL=server.url, REFEREE_ADMIN_TOKEN=ADMIN)
        api = _support.start(python_module("referee.cli", "serve", "--port", str(port)), port,
                             env=env)
        bot_url, bot = (_support.start_slow_bot(args.delay_ms) if args.delay_ms
                        else _support.start_bot())
        try:
            run(port, env, bot_url, args)
        finally:
            stop_all([api, bot])


def run(port: int, env: dict[str, str], bot_url: str, args: argparse.Namespace) -> None:
    base = f"http://127.0.0.1:{port}"
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {ADMIN}"
    bots = [session.post(f"{base}/bots", json={"name": f"bench-{n}", "url": bot_url,
                                               "games": [GAME]}, timeout=10).json()["id"]
            for n in (1, 2)]
    print(f"{'run':>10} {'match':>5} {'steps':>5} {'ms/decision':>12} {'complete':>9} "
          f"{'result +ms':>10} {'MB sent':>8}")
    timings: dict[str, list[float]] = {"without": [], "with": []}
    for index in range(args.matches):
        for label, clients in (("without", 0), ("with", args.clients)):  # interleaved
            timings[label].append(one_match(session, base, port, env, bots, index, label,
                                            clients))
    without, with_clients = (statistics.mean(timings[k]) for k in ("without", "with"))
    ratio = with_clients / without
    print(f"without clients: {without:.2f} ms/decision; with {args.clients} clients: "
          f"{with_clients:.2f} ms/decision")
    print(f"ratio with/without {ratio:.3f}: {'met' if ratio <= GOAL_RATIO else 'MISSED'} "
          f"({_support.load()})")


def one_match(session: requests.Session, base: str, port: int, env: dict[str, str],
              bots: list[str], index: int, label: str, clients: int) -> float:
    """Play one match with `clients` following it; its ms per decision."""
    match = session.post(f"{base}/matches", timeout=10, json={
        "game": GAME, "seed": 1000 + index,
        "seats": [{"kind": "bot", "bot_id": bot} for bot in bots]}).json()
    if clients:
        with Watchers(port, match["id"], clients) as watchers:
            play(env)
        summary = watchers_summary(watchers, session, base, match["id"], clients)
    else:
        play(env)
        summary = "-", "-", "-"
    record = session.get(f"{base}/matches/{match['id']}/replay", timeout=30).json()
    steps = len(record["steps"])
    ms = wall_ms(record) / steps
    print(f"{label:>10} {index:>5} {steps:>5} {ms:>12.2f} {summary[0]:>9} {summary[1]:>10} "
          f"{summary[2]:>8}")
    return ms


def play(env: dict[str, str]) -> None:
    done = subprocess.run(python_module("referee.cli", "worker", "--burst"), env=env,
                          cwd=_support.ROOT, capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])


def watchers_summary(watchers: Watchers, session: requests.Session, base: str, match_id: str,
                     clients: int) -> tuple[str, str, str]:
    """(clients that got every step in order and the result, how long after the match
    ended the last result arrived, megabytes the clients read)."""
    match = session.get(f"{base}/matches/{match_id}", timeout=10).json()
    complete = sum(steps == list(range(match["step"])) for steps in watchers.steps)
    ended = parse_time(match["finished_at"])
    late = max(watchers.results_at) - ended if watchers.results_at else float("nan")
    return f"{complete}/{clients}", f"{late * 1000:.0f}", f"{watchers.bytes / 1e6:.1f}"


def wall_ms(record: dict) -> float:
    return (parse_time(record["finished_at"]) - parse_time(record["started_at"])) * 1000


def parse_time(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


if __name__ == "__main__":
    main()
