"""Fixtures of the tournament tests: deterministic SDK bots on loopback, the API client of
tests/referee (every response checked against openapi.yaml) and long-running
`referee worker` processes that a test may kill."""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from openapi_core import OpenAPI

from bots.python.sdk import Choose, make_server
from referee.app import create_app
from referee.config import Config
from referee.redis_server import free_port

REFEREE_TESTS = Path(__file__).resolve().parents[1] / "referee"
sys.path.insert(0, str(REFEREE_TESTS))
apitest = importlib.import_module("apitest")  # the referee tests' helpers, by their own name
ADMIN = apitest.ADMIN
ApiClient = apitest.ApiClient
ROOT = apitest.ROOT
Workers = importlib.import_module("worker_procs").Workers


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
def refused_url() -> str:
    """A loopback URL where nothing listens: every decision is a connection error."""
    return f"http://127.0.0.1:{free_port()}/bot"


@pytest.fixture(scope="session")
def openapi() -> OpenAPI:
    return apitest.load_openapi()


@pytest.fixture
def config(redis_url) -> Config:
    return Config(redis_url=redis_url, admin_token=ADMIN, secret="test-secret")


@pytest.fixture
def api(config, openapi) -> ApiClient:
    return ApiClient(create_app(config), openapi)


@pytest.fixture
def register_bots(api, bot_farm) -> Callable[..., list[str]]:
    """Register `count` hashing bots (one server each) for every game; returns their ids."""

    def register(count: int = 4, delay_s: float = 0.0) -> list[str]:
        return [api.register_bot(bot_farm.url(f"bot{n}", delay_s), name=f"bot{n}")
                for n in range(count)]

    return register


@pytest.fixture
def workers(redis_url, tmp_path) -> Iterator[Workers]:
    pool = Workers(redis_url, tmp_path)
    yield pool
    pool.stop_all()
