"""Servers for the bot tests: Python SDK bots (and the app) in a thread, the Node bot as a
real process, each on a free loopback port and stopped at the end of the test; the C bot
built with the system compiler; stdin/stdout programs served by a bridge in a thread."""

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from loopback import serving

from bots.python.sdk import Choose, OnResult, make_server
from referee.bridge import BridgeConfig, running_bridge
from referee.redis_server import free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
NODE_BOT = ROOT / "bots" / "node" / "random_bot.js"
C_BOT = ROOT / "bots" / "c" / "random_bot.c"
PERL_BOT = ROOT / "bots" / "perl" / "random_bot.pl"
STDIO_PROGRAM = Path(__file__).resolve().parent / "stdio_program.py"


@contextmanager
def running_python_bot(choose: Choose, on_result: OnResult | None = None) -> Iterator[str]:
    """Serve `choose` with the SDK on a free port (result notices to `on_result`); yields
    the bot's URL."""
    with serving(make_server(choose, port=0, secret="", on_result=on_result)) as port:
        yield f"http://127.0.0.1:{port}/"


@contextmanager
def running_process_bot(command: list[str], env: dict[str, str] | None = None
                        ) -> Iterator[str]:
    """Run a bot program on a free port (`{port}` in `command` is replaced), with `env`
    added to the environment; yields its URL."""
    port = free_port()
    proc = subprocess.Popen([part.replace("{port}", str(port)) for part in command],
                            env={**os.environ, **(env or {})},
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
    """`with python_bot(choose[, on_result]) as url:` serves a chooser for the test's
    duration."""
    return running_python_bot


@pytest.fixture
def process_bot() -> Callable:
    """`with process_bot([program, ..., "{port}"]) as url:` runs a bot program."""
    return running_process_bot


def node_command() -> list[str]:
    """`node bots/node/random_bot.js --port {port}`."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: run scripts/test, which installs it")
    return [node, str(NODE_BOT), "--port", "{port}"]


@pytest.fixture(scope="module")
def node_bot_url() -> Iterator[str]:
    """`node bots/node/random_bot.js` on a free port, for the tests of a module."""
    with running_process_bot(node_command()) as url:
        yield url


@pytest.fixture
def node_bot() -> Callable:
    """`with node_bot({"REFEREE_BOT_SECRET": ...}) as url:` the Node bot with that
    environment added, for one test."""
    return lambda env=None: running_process_bot(node_command(), env)


@pytest.fixture(scope="session")
def c_bot(tmp_path_factory) -> Path:
    """bots/c/random_bot.c built with the system compiler (`cc`), warnings as errors."""
    if shutil.which("cc") is None:
        pytest.fail("no C compiler (cc): run scripts/test, which installs it")
    binary = tmp_path_factory.mktemp("c-bot") / "random_bot"
    built = subprocess.run(["cc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-o",
                            str(binary), str(C_BOT)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return binary


@pytest.fixture
def stdio_bot(tmp_path) -> Callable:
    """`with stdio_bot(argv, **limits) as url:` serves a stdin/stdout program through a
    bridge in a thread, its logs in tmp_path/logs."""
    def serve_program(argv: list[str], **limits) -> Iterator[str]:
        return running_bridge(BridgeConfig(tuple(argv), tmp_path / "logs", **limits))
    return serve_program


@pytest.fixture
def program() -> Callable:
    """`program(mode, *args)`: the argv of tests/bots/stdio_program.py in a mode (see its
    docstring)."""
    return lambda *args: [sys.executable, str(STDIO_PROGRAM), *args]
