"""Bots for the tests to play against, each on a free loopback port and stopped after: Python
SDK choosers served in a thread (one, or a farm of deterministic hashing bots), bot programs
as real processes (the Node bot, the C bot built with the system compiler), and the paths of
the example bots and of the stdin/stdout test program."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bots.python.sdk import Choose, OnResult, make_server
from referee.redis_server import free_port, wait_for_port
from tests.support.apitest import ROOT
from tests.support.loopback import serving

NODE_BOT = ROOT / "bots" / "node" / "random_bot.js"
C_BOT = ROOT / "bots" / "c" / "random_bot.c"
# Run by path (`python3 stdio_program.py MODE [ARGS...]`): see its docstring.
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


def node_command() -> list[str]:
    """`node bots/node/random_bot.js --port {port}`."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: run scripts/test, which installs it")
    return [node, str(NODE_BOT), "--port", "{port}"]


def build_c_bot(folder: Path) -> Path:
    """bots/c/random_bot.c built into `folder` with the system compiler (`cc`), warnings as
    errors; the binary's path."""
    if shutil.which("cc") is None:
        pytest.fail("no C compiler (cc): run scripts/test, which installs it")
    binary = folder / "random_bot"
    built = subprocess.run(["cc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-o",
                            str(binary), str(C_BOT)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return binary


def stdio_program(*args: str) -> list[str]:
    """The argv of tests/support/stdio_program.py in a mode (see its docstring)."""
    return [sys.executable, str(STDIO_PROGRAM), *args]


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
