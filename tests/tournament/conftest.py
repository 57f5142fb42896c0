"""Fixtures of the tournament tests: deterministic SDK bots on loopback and the server
settings they run under (the API client and the worker processes come from tests/conftest.py)."""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from apitest import ADMIN

from bots.python import random_bot
from bots.python.aladino_bot import choose_greedy
from bots.python.sdk import Choose, make_server
from referee.config import Config


def hashing_bot(salt: str, delay_s: float = 0.0) -> Choose:
    """A bot whose choice is a hash of its salt and what it sees: the same position always
    gets the same move, whichever worker asks and in whatever order."""

    def choose(observation: dict, legal_actions: list[dict]) -> dict:
        if delay_s:
            time.sleep(delay_s)
        seen = json.dumps([salt, observation, legal_actions], sort_keys=True).encode()
        return legal_actions[int(hashlib.sha256(seen).hexdigest(), 16) % len(legal_actions)]

    return choose


@dataclass
class BotFarm:
    """SDK bot servers in threads; `url(salt)` starts one per salt (and delay) on demand."""

    servers: dict[tuple[str, float], object] = field(default_factory=dict)

    def url(self, salt: str, delay_s: float = 0.0) -> str:
        key = (salt, delay_s)
        if key not in self.servers:
            server = make_server(hashing_bot(salt, delay_s), port=0)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            self.servers[key] = server
        return f"http://127.0.0.1:{self.servers[key].server_address[1]}/"

    def close(self) -> None:
        for server in self.servers.values():
            server.shutdown()
            server.server_close()


@pytest.fixture(scope="session")
def bot_farm() -> Iterator[BotFarm]:
    farm = BotFarm()
    yield farm
    farm.close()


@pytest.fixture
def config(redis_url) -> Config:
    return Config(redis_url=redis_url, admin_token=ADMIN, secret="test-secret")


@pytest.fixture
def register_bots(api, bot_farm) -> Callable[..., list[str]]:
    """Register `count` hashing bots (one server each) for every game; returns their ids.
    Bot names are unique across calls (a name is registered once)."""
    names = itertools.count()

    def register(count: int = 4, delay_s: float = 0.0) -> list[str]:
        return [api.register_bot(bot_farm.url(f"bot{n}", delay_s), name=f"bot{next(names)}")
                for n in range(count)]

    return register


@pytest.fixture(scope="session")
def strength_urls() -> Iterator[dict[str, str]]:
    """The greedy Aladino bot and the random bot, each an SDK HTTP server on loopback."""
    servers = {"greedy": make_server(choose_greedy), "random": make_server(
        random_bot.make_choose(7))}
    for server in servers.values():
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield {name: f"http://127.0.0.1:{server.server_address[1]}/"
           for name, server in servers.items()}
    for server in servers.values():
        server.shutdown()
        server.server_close()
