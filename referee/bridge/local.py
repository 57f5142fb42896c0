"""A bridge running in a background thread of this process, and `cmd:` bot specs.

`referee play` and `referee check-bot` accept `cmd:<command line>` wherever they accept a
bot URL: the command line is split as a shell would (`shlex`, no shell runs) and served by
a bridge on a free loopback port for as long as the command runs.
"""

from __future__ import annotations

import asyncio
import shlex
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from referee.bridge.server import Bridge, BridgeConfig
from referee.errors import RefereeError

CMD_PREFIX = "cmd:"
START_TIMEOUT_S = 30
CLOSE_TIMEOUT_S = 60


class BadCommand(RefereeError, ValueError):
    """A `cmd:` spec or a bridge command that cannot be run."""


def split_command(spec: str) -> list[str]:
    """The argv of a `cmd:<command line>` spec (or of a bare command line); BadCommand when
    it is empty or its program cannot be found."""
    text = spec.removeprefix(CMD_PREFIX)
    try:
        argv = shlex.split(text)
    except ValueError as error:
        raise BadCommand(f"cannot split the command line {text!r}: {error}") from None
    check_runnable(argv)
    return argv


def check_runnable(argv: list[str]) -> None:
    """BadCommand when `argv` is empty or its program is not on PATH nor an executable."""
    if not argv:
        raise BadCommand("the command line is empty")
    if shutil.which(argv[0]) is None:
        raise BadCommand(f"cannot run {argv[0]!r}: not found on PATH nor an executable file")


@contextmanager
def running_bridge(config: BridgeConfig, host: str = "127.0.0.1", port: int = 0
                   ) -> Iterator[str]:
    """Serve `config.command` from a thread with its own event loop for the block; yields
    the bot URL. At the end every program gets EOF and is stopped."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="referee-bridge", daemon=True)
    thread.start()
    bridge = Bridge(config)
    try:
        bound = asyncio.run_coroutine_threadsafe(bridge.start(host, port), loop)
        yield f"http://{host}:{bound.result(START_TIMEOUT_S)}/"
    finally:
        asyncio.run_coroutine_threadsafe(bridge.close(), loop).result(CLOSE_TIMEOUT_S)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


@dataclass
class ServedBots:
    """The URL of each bot spec, and the folder of the `cmd:` programs' stderr (if any)."""

    urls: list[str]
    log_dir: Path | None


@contextmanager
def bot_urls(specs: list[str]) -> Iterator[ServedBots]:
    """Serve the bot specs for the block: a URL as it is, a `cmd:` spec by a bridge of its
    own (one per distinct command line), its programs' stderr in a new temporary folder
    kept for reading afterwards. BadCommand before anything starts when a command cannot
    be run."""
    commands = {spec: split_command(spec) for spec in specs if spec.startswith(CMD_PREFIX)}
    log_dir = Path(tempfile.mkdtemp(prefix="referee-bridge-")) if commands else None
    with ExitStack() as stack:
        urls = {spec: stack.enter_context(running_bridge(BridgeConfig(tuple(argv), log_dir)))
                for spec, argv in commands.items() if log_dir}
        yield ServedBots([urls.get(spec, spec) for spec in specs], log_dir)
