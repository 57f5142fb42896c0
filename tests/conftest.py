"""The fixtures every folder shares, in the Flask manner: one `config` (the common test
settings), the `app` made from it by `create_app`, and the `api` client of that app; a
folder or module that needs other settings overrides `config_overrides` with only what
differs. Besides: a real redis-server on a free loopback port for the whole run, `referee
worker` and `referee serve` processes, the app over HTTP, and the bots the tests play
against. Fixtures of one folder only are in that folder's conftest.py; the helpers behind
them are in tests/support/."""

from __future__ import annotations

import gc
import itertools
import os
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from flask import Flask
from openapi_core import OpenAPI
from werkzeug.serving import make_server
from xdist.scheduler import LoadFileScheduling

from bots.python import random_bot
from bots.python.aladino_bot import choose_greedy
from bots.python.sdk import make_server as make_bot_server
from referee.api.app import create_app
from referee.config import Config
from referee.redis_server import RedisServer
from tests.support.apitest import (
    ROOT,
    ApiClient,
    common_config,
    load_openapi,
    signing_key_file,
    worker_command,
    worker_env,
)
from tests.support.bot_servers import (
    BotFarm,
    build_c_bot,
    node_command,
    running_process_bot,
    running_python_bot,
)
from tests.support.botserver import BotServer
from tests.support.live_server import LiveServer
from tests.support.loopback import serving
from tests.support.workers import Workers

# Every `referee serve` and `referee worker` a test starts (their environments start from
# os.environ) signs with this process's test key, as the `config` fixture does.
os.environ["REFEREE_SIGNING_KEY_FILE"] = str(signing_key_file())
# ...and keeps the tests' CPU share: a worker at its default nice 10 would wait behind the
# other test process on a loaded machine, and its bots' clocks with it. The default itself
# is tested in tests/commands/test_worker_priority.py.
os.environ["REFEREE_WORKER_NICE"] = "0"

# ----- scheduling over the test processes ------------------------------------------------
LONG_FILES = ("tests/hardening/test_hardening_schemathesis.py", "tests/test_packaging.py",
              "tests/tournament/test_ladders.py", "tests/ops/test_install.py",
              "tests/engines/test_conformance.py", "tests/demo/test_demo.py",
              "tests/tournament/test_failover.py", "tests/engines/test_determinize.py")
"""Files that take minutes, the longest first: handed out first, in this order, so that the
run does not end on one of them while the other process idles."""
SPREAD_FILES = ("tests/hardening/test_hardening_schemathesis.py",
                "tests/bench/test_bench_scripts.py")
"""Files whose tests need no module fixtures (each starts its own servers): handed out one
test at a time, and, unless they are long too, last, to fill the gaps."""


def _turn(item: pytest.Item) -> tuple[int, int]:
    path = item.nodeid.split("::")[0]
    if path in LONG_FILES:
        return 0, LONG_FILES.index(path)
    return 2 if path in SPREAD_FILES else 1, 0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The order files are handed out in (`FileScheduling` keeps the collection's)."""
    items.sort(key=_turn)


class FileScheduling(LoadFileScheduling):
    """pytest-xdist's `--dist loadfile` (scripts/test), a file's tests in one process with
    its module fixtures, but in the collection's order (its default sorts the files by
    their number of tests, which left the longest files, of few tests, for the end) and
    `SPREAD_FILES` test by test."""

    def __init__(self, config: pytest.Config, log: object = None) -> None:
        config.option.loadscopereorder = False
        super().__init__(config, log)

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::")[0]
        return nodeid if path in SPREAD_FILES else path


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> FileScheduling | None:
    return FileScheduling(config, log) if config.getvalue("dist") == "loadfile" else None


@pytest.fixture
def no_garbage_collection() -> Iterator[None]:
    """The garbage collector held off for the test: only the code under test can have
    closed what a test of leftovers (open descriptors) finds closed."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


# ----- Redis -----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """A real redis-server for the whole test run; yields its URL."""
    with RedisServer(tmp_path_factory.mktemp("redis"), persistent=False) as server:
        yield server.url


@pytest.fixture
def redis_url(redis_server):
    """The shared server's URL with the database flushed before the test."""
    client = redis.Redis.from_url(redis_server)
    client.flushall()
    client.close()
    return redis_server


@pytest.fixture
def refused_url() -> Iterator[str]:
    """A loopback URL where nothing listens: every decision is a connection error. Its port
    is held (bound, never listening) for the test, so no server of another test takes it
    meanwhile (a port only found free once was, under load)."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{held.getsockname()[1]}/bot"


# ----- the app: config -> create_app -> api -----------------------------------------------


@pytest.fixture
def config_overrides() -> dict:
    """The settings a folder or module changes in `config`: none here. Override this
    fixture (in a conftest.py or a test module) with only the settings that differ."""
    return {}


@pytest.fixture
def config(redis_url, config_overrides) -> Config:
    """The common test settings (tests/support/apitest.py's `common_config`: the admin
    token, the replay signing key, `Config`'s defaults for everything else) on the test
    Redis, with `config_overrides` applied."""
    return common_config(redis_url, **config_overrides)


@pytest.fixture
def app(config) -> Flask:
    """The API's Flask app, every blueprint, as `referee serve` builds it."""
    return create_app(config)


@pytest.fixture(scope="session")
def openapi() -> OpenAPI:
    return load_openapi()


@pytest.fixture
def api(app, openapi) -> ApiClient:
    """The Flask test client of `app`; every response is checked against openapi.yaml."""
    return ApiClient(app, openapi)


@pytest.fixture
def app_url(app) -> Iterator[str]:
    """`app` over HTTP (werkzeug, threaded) on a free loopback port; its base URL."""
    with serving(make_server("127.0.0.1", 0, app, threaded=True)) as port:
        yield f"http://127.0.0.1:{port}"


# ----- processes: workers, `referee serve` ------------------------------------------------


@pytest.fixture
def workers(redis_url, tmp_path) -> Iterator[Workers]:
    """Long-running `referee worker` processes a test may start and kill; all stopped after."""
    pool = Workers(redis_url, tmp_path)
    yield pool
    pool.stop_all()


@pytest.fixture
def run_worker(redis_url) -> Callable[..., str]:
    """Run `referee worker --burst` to the end of the queue; returns its output."""

    def run(timeout: float = 60, *extra: str) -> str:
        done = subprocess.run(worker_command("--burst", *extra), env=worker_env(redis_url),
                              cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, done.stderr
        return done.stdout + done.stderr

    return run


@pytest.fixture(scope="module")
def live_server(redis_server, tmp_path_factory) -> Iterator[LiveServer]:
    """`referee serve` (gunicorn, one worker process) against the test Redis, one for the
    tests of a module."""
    server = LiveServer(redis_server, tmp_path_factory.mktemp("serve") / "serve.log")
    yield server
    server.stop()


# ----- bots --------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def bot_server() -> Iterator[BotServer]:
    """The test bots of tests/support/botserver.py: the URL path picks the behaviour."""
    server = BotServer().start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def python_bot() -> Callable:
    """`with python_bot(choose[, on_result]) as url:` serves a chooser with the SDK for the
    block."""
    return running_python_bot


@pytest.fixture(scope="module")
def node_bot_url() -> Iterator[str]:
    """`node bots/node/random_bot.js` on a free port, for the tests of a module."""
    with running_process_bot(node_command()) as url:
        yield url


@pytest.fixture(scope="session")
def c_bot(tmp_path_factory) -> Path:
    """bots/c/random_bot.c built with the system compiler (`cc`), warnings as errors."""
    return build_c_bot(tmp_path_factory.mktemp("c-bot"))


@pytest.fixture(scope="session")
def bot_farm() -> Iterator[BotFarm]:
    """Deterministic hashing bots (SDK servers in threads), one per salt on demand."""
    farm = BotFarm()
    yield farm
    farm.close()


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
    servers = {"greedy": make_bot_server(choose_greedy), "random": make_bot_server(
        random_bot.make_choose(7))}
    for server in servers.values():
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield {name: f"http://127.0.0.1:{server.server_address[1]}/"
           for name, server in servers.items()}
    for server in servers.values():
        server.shutdown()
        server.server_close()
