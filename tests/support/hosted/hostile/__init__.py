"""The escape suite's hostile hosted bot (main.py, python3): one program for every attack,
the attack and what it aims at (ports, paths, the worker's pid, the marker of its
processes) written into its CONFIG line at upload (`source`)."""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).parent
CONFIG_LINE = re.compile(r"^CONFIG = .*$", re.MULTILINE)
MARKER_VARIABLE = "HOSTILE_MARKER"  # main.py's: its environment holds the marker too


def source(config: dict) -> dict:
    """The `source` of a POST /bots for the hostile bot making `config["attack"]`; `config`
    holds only str, int, bool, None and lists of them (written in as a Python literal)."""
    text, found = CONFIG_LINE.subn(lambda _: f"CONFIG = {config!r}",
                                   (HERE / "main.py").read_text(), count=1)
    if not found:
        raise ValueError("main.py has lost its CONFIG line")
    return {"language": "python3", "files": {"main.py": text}}
