"""Redis Sentinel failover during a tournament (issue 31): a real primary, a replica and
three redis-sentinel processes; `referee serve` and two `referee worker`s on the Sentinel
set's URL. The primary fails twice while the tournament plays, killed with -9 or cut off
the network (its machine's link down: it lives on, unreachable, and comes back): a new
primary is elected each time, `GET /health` answers again within 10 s of each election,
no process exits, and every match finishes once, is counted once, logged once and keeps a
valid signed replay."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from referee.api.app import create_app
from referee.config import Config
from referee.redis_server import SentinelSet
from tests.support.apitest import ApiClient, wait_finished
from tests.support.bot_servers import BotFarm
from tests.support.failover import HealthWatch, Kill, Partition, sentinel_set, wait_new_primary
from tests.support.live_server import LiveServer
from tests.support.netns import Network
from tests.support.tournament_checks import (
    check_live_elo,
    check_logged_once,
    check_round_robin,
    finished_matches,
    start,
)
from tests.support.workers import Workers
from tournament.store import Store, ratings_key, tournament_key

SLOW_S = 0.4  # per decision: an Aladino match lasts 10-15 s, through both failovers
FAILOVERS = 2
HEALTHY_WITHIN_S = 10.0
STEPS_BETWEEN = 12  # steps recorded on each primary before it fails


@pytest.fixture
def network() -> Iterator[Network]:
    with Network() as made:
        yield made


def recorded_steps(store: Store, match_ids: list[str]) -> int:
    return sum(match["step"] for match in store.get_matches(match_ids) if match)


def wait_progress(store: Store, match_ids: list[str], steps: int, timeout: float = 60) -> None:
    """Until `steps` more steps are recorded than now (the tournament plays on)."""
    target = recorded_steps(store, match_ids) + steps
    deadline = time.monotonic() + timeout
    while recorded_steps(store, match_ids) < target:
        assert time.monotonic() < deadline, f"fewer than {steps} steps in {timeout} s"
        time.sleep(0.1)


def play_through_failovers(how: Kill | Partition, ha: SentinelSet, tmp_path: Path,
                           config: Config, openapi, bot_farm: BotFarm) -> None:
    workers = Workers(ha.url, tmp_path)
    server = watch = None
    try:
        ha.start()
        server = LiveServer(ha.url, tmp_path / "serve.log")
        watch = HealthWatch(server.url)
        started = workers.start(2)
        api = ApiClient(create_app(replace(config, redis_url=ha.url)), openapi)
        store = Store.from_url(ha.url)
        bots = [api.register_bot(bot_farm.url(f"failover{n}", SLOW_S), name=f"failover{n}")
                for n in range(4)]
        view = start(api, "aladino", bots, 2, seed=31)
        for _ in range(FAILOVERS):
            wait_progress(store, view["matches"], STEPS_BETWEEN)
            old = ha.primary()
            failed_at = time.monotonic()
            how.fail(ha.node_at(old))
            new = wait_new_primary(ha, old)
            elected_at = time.monotonic()
            healthy_at = watch.healthy_after(elected_at)
            print(f"{how.name}: new primary {elapsed(failed_at, elected_at)} after, "
                  f"GET /health 200 {elapsed(elected_at, healthy_at)} after the election")
            assert healthy_at - elected_at <= HEALTHY_WITHIN_S
            how.restore(ha.node_at(old), new)
            ha.wait_ready()
        final = wait_finished(api, view["id"], timeout=120)
        assert all(proc.poll() is None for proc in started), workers.logs()
        assert server.proc.poll() is None, server.log()
        check_round_robin(api, final, bots, 2, rounds=1)
        check_counted_once(store, final)
        primary_url = "redis://{}:{}/0".format(*ha.primary())
        check_live_elo(api, primary_url, "aladino", finished_matches(api, final))
        check_logged_once(api, final["matches"])
        store.redis.close()
    finally:  # whatever had started, even if the set or the server never came up
        if watch is not None:
            watch.stop()
        workers.stop_all()
        if server is not None:
            server.stop()
        ha.stop()


def elapsed(since: float, until: float) -> str:
    return f"{until - since:.1f} s"


def check_counted_once(store: Store, view: dict) -> None:
    matches = view["matches"]
    assert store.redis.scard(tournament_key(view["id"], "done")) == len(matches)
    assert store.redis.scard(ratings_key("aladino", "counted")) == len(matches)
    assert store.redis.llen(ratings_key("aladino", "results")) == len(matches)


def test_the_primary_killed_twice_during_a_tournament_loses_and_doubles_nothing(
        tmp_path, config, openapi, bot_farm):
    play_through_failovers(Kill(), sentinel_set(tmp_path / "redis"), tmp_path, config,
                           openapi, bot_farm)


def test_the_primary_cut_off_twice_during_a_tournament_loses_and_doubles_nothing(
        tmp_path, config, openapi, bot_farm, network):
    play_through_failovers(Partition(network), sentinel_set(tmp_path / "redis", network),
                           tmp_path, config, openapi, bot_farm)
