"""Fixtures of the bridge tests: stdin/stdout programs (tests/support/stdio_program.py)
served by a bridge in a thread of the test process."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from referee.bridge import BridgeConfig, running_bridge
from tests.support.bot_servers import stdio_program


@pytest.fixture
def stdio_bot(tmp_path) -> Callable:
    """`with stdio_bot(argv, **limits) as url:` serves a stdin/stdout program through a
    bridge in a thread, its logs in tmp_path/logs."""
    def serve_program(argv: list[str], **limits) -> Iterator[str]:
        return running_bridge(BridgeConfig(tuple(argv), tmp_path / "logs", **limits))
    return serve_program


@pytest.fixture
def program() -> Callable:
    """`program(mode, *args)`: the argv of tests/support/stdio_program.py in a mode (see
    its docstring)."""
    return stdio_program
