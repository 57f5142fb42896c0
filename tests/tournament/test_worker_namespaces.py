"""Workers on machines of their own (issue 31): each `referee worker` runs in a network
namespace of its own and reaches Redis through a proxy that adds 1 ms each way, as a worker
on another machine would; the API, Redis and the bots are on this host. The workers play a
tournament; one worker's link is cut in the middle of a match: its leases lapse, the other
worker continues its matches from their recorded steps, and no match is lost, doubled or
left unsigned. No worker exits, the cut one included."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from rq import Worker

from bots.python.sdk import make_server
from referee.match.urls import DEFAULT_BOT_HOSTS
from referee.redis_server import free_port
from tests.support.apitest import ROOT, wait_finished, worker_command, worker_env
from tests.support.bot_servers import hashing_bot
from tests.support.delay_proxy import start_proxy
from tests.support.netns import Machine, Network
from tests.support.tournament_checks import (
    check_live_elo,
    check_logged_once,
    check_round_robin,
    finished_matches,
    start,
)
from tournament.store import Store, lease_key, ratings_key, running_key, tournament_key

SLOW_S = 0.1  # per decision: an Aladino match lasts a few seconds
DELAY_MS = 1.0


@pytest.fixture
def network() -> Iterator[Network]:
    with Network() as made:
        yield made


@pytest.fixture
def config_overrides(network) -> dict:
    """The API admits bots on the network (where the bots listen: this host's address)."""
    return {"bot_hosts": (*DEFAULT_BOT_HOSTS.split(","), network.subnet)}


@pytest.fixture
def proxied_redis(network, redis_url) -> Iterator[str]:
    """The test Redis as the machines reach it: this host's address, through the proxy."""
    port = free_port()
    proxy = start_proxy((network.host, port), ("127.0.0.1", urlsplit(redis_url).port),
                        DELAY_MS)
    yield f"redis://{network.host}:{port}/0"
    proxy.terminate()
    proxy.wait(timeout=10)


@pytest.fixture
def network_bots(network) -> Iterator[list[str]]:
    """Four hashing bots (their moves a function of what they see) on this host's address."""
    servers = [make_server(hashing_bot(f"ns{n}", SLOW_S), host=network.host, secret="")
               for n in range(4)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield [f"http://{network.host}:{server.server_address[1]}/" for server in servers]
    for server in servers:
        server.shutdown()
        server.server_close()


def start_worker(machine: Machine, redis_url: str, subnet: str, log_dir: Path
                 ) -> subprocess.Popen:
    env = {**worker_env(redis_url), "REFEREE_BOT_HOSTS": subnet}
    return machine.start(worker_command(), env, log_dir / f"worker-{machine.address}.log",
                         cwd=ROOT)


def match_in_progress(store: Store, timeout: float = 60) -> tuple[str, int]:
    """A match some worker drives, once a few of its steps are recorded, and that worker's
    pid."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = {worker.name: worker.pid for worker in Worker.all(connection=store.redis)}
        for raw in store.redis.zrange(running_key(), 0, -1):
            holder = (store.redis.get(lease_key(raw.decode())) or b"").decode()
            name = holder.rpartition("/")[0]
            if name in pids and store.get_match(raw.decode())["step"] >= 4:
                return raw.decode(), pids[name]
        time.sleep(0.02)
    raise AssertionError(f"no match in progress within {timeout}s")


def wait_workers(store: Store, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while Worker.count(connection=store.redis) < count:
        assert time.monotonic() < deadline, "the workers did not register with rq"
        time.sleep(0.05)


def test_workers_on_other_machines_lose_no_match_when_one_is_cut_off(
        api, network, proxied_redis, network_bots, redis_url, tmp_path):
    store = Store.from_url(redis_url)
    machines = [network.machine(), network.machine()]
    workers = {machine: start_worker(machine, proxied_redis, network.subnet, tmp_path)
               for machine in machines}
    try:
        wait_workers(store, len(workers))
        bots = [api.register_bot(url, name=f"ns{n}") for n, url in enumerate(network_bots)]
        view = start(api, "aladino", bots, 2, seed=37)
        cut_match, pid = match_in_progress(store)
        (cut,) = [machine for machine, proc in workers.items() if proc.pid == pid]
        recorded = store.steps(cut_match)
        cut.cut()
        final = wait_finished(api, view["id"], timeout=120)
        cut.mend()
        assert store.current_attempt(cut_match) >= 1  # taken over, not played again
        record = api.get(f"/matches/{cut_match}/replay").get_json()
        assert record["steps"][:len(recorded)] == recorded
        check_round_robin(api, final, bots, 2, rounds=1)
        check_live_elo(api, redis_url, "aladino", finished_matches(api, final))
        assert store.redis.scard(tournament_key(view["id"], "done")) == len(view["matches"])
        assert store.redis.scard(ratings_key("aladino", "counted")) == len(view["matches"])
        check_logged_once(api, final["matches"])
        assert all(proc.poll() is None for proc in workers.values()), "a worker exited"
    finally:
        for proc in workers.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
