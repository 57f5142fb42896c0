"""How values are written to Redis: JSON by orjson, never a Python-only format (the bigger
values of a match are packed by `referee.match.compact`, read back as they were written)."""

from __future__ import annotations

from typing import Any

import orjson


def dumps(value: Any) -> bytes:
    return orjson.dumps(value)


def loads(data: bytes | str | None) -> Any:
    return None if data is None else orjson.loads(data)


# redis-py types a reply as `bytes | str` (str under `decode_responses`, which no client of
# the referee sets: every reply is bytes); these read a reply as what it is.
def text(raw: bytes | str | None) -> str | None:
    """A stored string, or None."""
    return None if raw is None else decoded(raw)


def decoded(raw: bytes | str) -> str:
    """A stored string."""
    return raw.decode() if isinstance(raw, bytes) else raw


def binary(raw: bytes | str | None) -> bytes | None:
    """A stored binary value (packed or deflated JSON), or None."""
    if raw is None or isinstance(raw, bytes):
        return raw
    raise TypeError("a Redis reply decoded to str: the store needs decode_responses off")
