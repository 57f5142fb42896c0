"""Code printed in docs/bots.md, read and run by the tests so the docs cannot rot."""

from __future__ import annotations

import re
from pathlib import Path

BOTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "bots.md"


def python_block(heading: str, index: int = 0) -> str:
    """The `index`-th Python block after `heading` in docs/bots.md."""
    text = BOTS_DOC.read_text()
    return re.findall(r"```python\n(.*?)```", text[text.index(heading):], re.S)[index]


def run(code: str) -> dict:
    """Run a block of the doc; the names it defines."""
    namespace: dict = {}
    exec(compile(code, str(BOTS_DOC), "exec"), namespace)  # noqa: S102 - our own doc's code
    return namespace


def run_python_block(heading: str, index: int = 0) -> dict:
    """Run the `index`-th Python block after `heading`; the names it defines."""
    return run(python_block(heading, index))
