"""Hosted bots' source, one per language, each playing the first legal action of every
decision of any game (and saying nothing to updates and the result): what the hosted
tests upload (`source(language)`)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).parent
ENTRY = {"python3": "main.py", "c": "main.c", "cpp": "main.cpp", "node": "main.js",
         "java": "Main.java", "perl": "main.pl"}


def source(language: str) -> dict:
    """The `source` of a POST /bots for the language's first-legal-action bot."""
    entry = ENTRY[language]
    return {"language": language,
            "files": {entry: (HERE / "first_legal" / entry).read_text()}}


@contextmanager
def reachable_folder(prefix: str) -> Iterator[Path]:
    """A new folder the sandbox's uid can pass through (pytest's tmp_path is root's
    alone), removed after the block."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
