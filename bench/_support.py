"""What the benchmark scripts share: the machine line, child processes (bots, Redis, rq
workers, gunicorn) started on loopback ports and stopped again, an in-process match against
a bot, and small statistics."""

from __future__ import annotations

import asyncio
import atexit
import functools
import http.client
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis
import redis.asyncio as aioredis
from rq import Worker

ROOT = Path(__file__).resolve().parent.parent
TICKS = os.sysconf("SC_CLK_TCK")
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from referee.match.runner import FailurePolicy, PushSeat, run_match  # noqa: E402
from referee.match.sealing import Sealer, append_new_key  # noqa: E402
from referee.processes import interrupt_on_sigterm, python_module, spawn  # noqa: E402
from referee.redis_server import RedisServer, free_port  # noqa: E402
from tournament.store import Store, bot_seats, new_match_meta, tournament_key  # noqa: E402
from tournament.store.progress import Progress  # noqa: E402

# A bench stopped with `kill` stops its children as Ctrl-C does: they are in sessions of
# their own, and were left running.
interrupt_on_sigterm()


def load() -> str:
    """The 1-minute load average, printed next to every figure (the machine is shared)."""
    return f"load {os.getloadavg()[0]:.2f}"


def header(title: str, goal: str) -> None:
    """The script's title, its goal and the machine it runs on."""
    print(f"== {title}")
    print(f"goal: {goal}")
    print(f"machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, {load()}")


@functools.cache
def key_file() -> Path:
    """An Ed25519 key file for this bench run (a temporary folder that goes with it): what
    the servers and workers it starts sign with."""
    folder = Path(tempfile.mkdtemp(prefix="referee-bench-keys-"))
    atexit.register(shutil.rmtree, folder, True)
    append_new_key(folder / "signing-keys.pem")
    return folder / "signing-keys.pem"


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a server or worker the bench starts (signing with `key_file`)."""
    return dict(os.environ, PYTHONPATH=str(ROOT), REFEREE_SIGNING_KEY_FILE=str(key_file()),
                **extra)


def sealer() -> Sealer:
    return Sealer.from_key_file(key_file())


def start(argv: list[str], port: int | None = None, env: dict[str, str] | None = None,
          log: Path | None = None) -> subprocess.Popen:
    """Start a child in the repository root (output to `log` or nowhere); when `port` is
    given, wait until it listens."""
    return spawn(argv, env or child_env(), log, port, cwd=ROOT)


def start_bot(module: str = "bots.python.random_bot", *args: str) -> tuple[str, subprocess.Popen]:
    """A push bot in its own process on a free loopback port: (url, process)."""
    port = free_port()
    process = start(python_module(module, "--port", str(port), *args), port)
    return f"http://127.0.0.1:{port}/", process


def start_slow_bot(delay_ms: float, *extra: str) -> tuple[str, subprocess.Popen]:
    """A random bot that sleeps `delay_ms` before each answer (threaded: serves many)."""
    port = free_port()
    script = str(ROOT / "bench" / "slow_bot.py")
    process = start([sys.executable, script, "--port", str(port), "--delay-ms", str(delay_ms),
                     *extra], port)
    return f"http://127.0.0.1:{port}/", process


def play_match(url: str, game: str, variant: dict, seed: int,
               signer: Sealer | None = None) -> tuple[dict, float]:
    """One in-process `run_match`, every seat the bot at `url`: (replay record, seconds)."""
    seats = [PushSeat(url, deadline_ms=10000) for _ in range(variant["num_players"])]
    started = time.perf_counter()
    record = run_match(game, seed, variant["options"], seats, FailurePolicy(),
                       f"bench-{seed}", sealer=signer)
    return record, elapsed(started)


def bot_match_meta(match_id: str, game: str, game_version: str, bots: list[tuple[str, str]],
                   seed: int, options: dict, policy: dict, deadline_ms: int) -> dict:
    """A match between registered bots (id, seat name) as `POST /matches` stores it."""
    return new_match_meta(game, game_version, bot_seats(bots), options, seed, policy,
                          deadline_ms, deadline_ms, match_id=match_id)


def wait_tournament(store: Store, meta: dict, timeout_s: float, poll_s: float = 0.02) -> None:
    """Until every match of the tournament `meta` is counted; RuntimeError after
    `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while store.redis.scard(tournament_key(meta["id"], "done")) < meta["total"]:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the tournament did not finish within {timeout_s:g} s")
        time.sleep(poll_s)


def tournament_match_ids(store: Store, meta: dict) -> list[str]:
    return [i.decode() for i in store.redis.lrange(tournament_key(meta["id"], "matches"), 0, -1)]


def tournament_decisions(store: Store, meta: dict) -> int:
    """The decisions played in the tournament's matches."""
    return sum(match["step"] for match in store.get_matches(tournament_match_ids(store, meta)))


@contextmanager
def redis_server() -> Iterator[RedisServer]:
    """A throw-away redis-server without persistence."""
    with (tempfile.TemporaryDirectory(prefix="bench-redis-") as directory,
          RedisServer(Path(directory), persistent=False) as server):
        yield server


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and of its children it has waited for."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / TICKS


def tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and all its descendants, in MB (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0.0
    rss_kb = next((int(line.split()[1]) for line in status.splitlines()
                   if line.startswith("VmRSS:")), 0)
    return rss_kb / 1024 + sum(tree_rss_mb(int(child)) for child in children)


def wait_port(port: int, timeout: float = 30) -> None:
    """Until something accepts connections on the loopback port."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {timeout} s")


def wait_workers(connection: redis.Redis, count: int, timeout: float = 60) -> None:
    """Return once `count` rq workers are registered (RuntimeError after `timeout`)."""
    deadline = time.monotonic() + timeout
    while Worker.count(connection=connection) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{count} rq workers did not register within {timeout:.0f} s")
        time.sleep(0.1)


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile of `values` (fraction in 0..1)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * len(ordered) + 0.5) - 1))
    return ordered[index]


def elapsed(started: float) -> float:
    return time.perf_counter() - started


def store_finished(redis_url: str, match_id: str, record: dict) -> None:
    """Store a sealed record as the finished match `match_id` (created before), the way a
    driver does: under the match's lease, through `tournament.store.progress`."""

    async def finish() -> None:
        client = aioredis.Redis.from_url(redis_url)
        progress = Progress(client)
        try:
            await progress.take_lease(match_id, "bench-driver")
            await progress.start(match_id, record["game"], "bench-driver", record["started_at"])
            await progress.finish(match_id, "bench-driver", record, len(record["seats"]))
        finally:
            await client.aclose()

    asyncio.run(finish())


def timed_gets(port: int, paths: list[str]) -> tuple[list[float], list[dict]]:
    """Milliseconds per request (one at a time, one kept-alive connection) and the bodies."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    spent, bodies = [], []
    for path in paths:
        started = time.perf_counter()
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        spent.append(elapsed(started) * 1000)
        if response.status != 200:
            raise RuntimeError(f"GET {path} answered {response.status}: {body[:300]!r}")
        bodies.append(body)
    connection.close()
    return spent, [json.loads(body) for body in bodies]
