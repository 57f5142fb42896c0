"""Servers for the bot tests: Python SDK bots (and the app) in a thread, the Node bot as a
real process, each on a free loopback port and stopped at the end of the test."""

import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from loopback import serving

from bots.python.sdk import Choose, make_server
from referee.redis_server import free_port, wait_for_port

NODE_BOT = Path(__file__).resolve().parents[2] / "bots" / "node" / "random_bot.js"


@contextmanager
def running_python_bot(choose: Choose) -> Iterator[str]:
    """Serve `choose` with the SDK on a free port; yields the bot's URL."""
    with serving(make_server(choose, port=0)) as port:
        yield f"http://127.0.0.1:{port}/"


@contextmanager
def running_process_bot(command: list[str]) -> Iterator[str]:
    """Run a bot program on a free port (`{port}` in `command` is replaced); yields its URL."""
    port = free_port()
    proc = subprocess.Popen([part.replace("{port}", str(port)) for part in command],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def serve() -> Callable:
    """`with serve(server) as port:` runs a bound server (the app, a bot) for the block."""
    return serving


@pytest.fixture
def python_bot() -> Callable:
    """`with python_bot(choose) as url:` serves a chooser for the test's duration."""
    return running_python_bot


@pytest.fixture
def process_bot() -> Callable:
    """`with process_bot([program, ..., "{port}"]) as url:` runs a bot program."""
    return running_process_bot


@pytest.fixture(scope="module")
def node_bot_url() -> Iterator[str]:
    """`node bots/node/random_bot.js` on a free port, for the tests of a module."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: run scripts/test, which installs it")
    with running_process_bot([node, str(NODE_BOT), "--port", "{port}"]) as url:
        yield url
