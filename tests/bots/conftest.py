"""Fixtures of the bot tests: a bound server (an SDK bot, the app) served in a thread, and
bot programs as real processes (the Node bot with an environment of the test's choosing),
each on a free loopback port and stopped at the end of the test. The SDK bots, the Node bot
of a module and the C bot are tests/conftest.py's."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.bot_servers import node_command, running_process_bot
from tests.support.loopback import serving


@pytest.fixture
def serve() -> Callable:
    """`with serve(server) as port:` runs a bound server (the app, a bot) for the block."""
    return serving


@pytest.fixture
def process_bot() -> Callable:
    """`with process_bot([program, ..., "{port}"]) as url:` runs a bot program."""
    return running_process_bot


@pytest.fixture
def node_bot() -> Callable:
    """`with node_bot({"REFEREE_BOT_SECRET": ...}) as url:` the Node bot with that
    environment added, for one test."""
    return lambda env=None: running_process_bot(node_command(), env)
