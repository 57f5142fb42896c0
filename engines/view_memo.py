"""JSON of an observation's parts kept with the parts of the state they show
(engines.observation_json, `Rules._view_parts`): a part is written again only when the
state part it is made from is another object. A state's parts are never changed once the
state is made (`apply` copies what it changes, engines.base), so the same object means the
same JSON."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import orjson


class Memo:
    """JSON of a view's parts, each kept with the state parts it was made from."""

    def __init__(self) -> None:
        self._kept: dict[Hashable, tuple[Any, bytes]] = {}

    def json(self, name: Hashable, source: Any, make: Callable[[], Any] | None = None
             ) -> bytes:
        """The JSON of `make()` (None: of `source` itself), written again only when
        `source`, the part of the state it is made from, is another object than when the
        part `name` was last written."""
        kept = self._kept.get(name)
        if kept is not None and kept[0] is source:
            return kept[1]
        written = kept_json(source if make is None else make())
        self._kept[name] = (source, written)
        return written


def kept_json(value: Any) -> bytes:
    """`orjson.dumps(value)` at its size, for JSON kept for long: orjson's bytes keep all
    the room it allocated to write them (4 KB for a few hundred bytes of JSON)."""
    return memoryview(orjson.dumps(value)).tobytes()
