"""How values are written to Redis: JSON by orjson, never a Python-only format (the bigger
values of a match are packed by `referee.match.compact`, read back as they were written)."""

from __future__ import annotations

from typing import Any

import orjson


def dumps(value: Any) -> bytes:
    return orjson.dumps(value)


def loads(data: bytes | None) -> Any:
    return None if data is None else orjson.loads(data)


def text(raw: bytes | None) -> str | None:
    """A stored string, or None."""
    return None if raw is None else raw.decode()
