"""Matches as the match lists answer them, kept rendered in each API process.

A page of matches (`GET /matches`, a tournament's, a ladder's) was mostly spent decoding 20
match hashes and dumping them through `MatchSchema`: 2-3 ms of CPU a page, the API's
costliest common request. A match's hash is still read from Redis at every request; only
when it is byte for byte the one this process rendered last is the rendered row reused. A
queued or finished match (most of a page) does not change between two reads; a running one
changes at every step and is rendered again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tournament.store import match_fields

ROWS = 2048
"""Matches kept rendered per process (about 5 KB each)."""

Render = Callable[[dict[str, Any], bool], bytes]
"""A match's row as JSON, its seed hidden or not."""


@dataclass
class Row:
    """One match: its hash as read, decoded, and its row rendered per seed visibility."""

    raw: Mapping[bytes, bytes]
    match: dict[str, Any]
    rendered: dict[bool, bytes] = field(default_factory=dict)

    def json(self, secret: bool, render: Render) -> bytes:
        """The row (`secret`: its seed hidden), rendered once."""
        if secret not in self.rendered:
            self.rendered[secret] = render(self.match, secret)
        return self.rendered[secret]


class MatchRows:
    """The last `size` matches rendered, least recently used first out."""

    def __init__(self, size: int = ROWS):
        self.size = size
        self.rows: OrderedDict[str, Row] = OrderedDict()

    def rows_of(self, match_ids: list[str], hashes: Sequence[Mapping[bytes, bytes]]
                ) -> list[Row]:
        """The rows of the matches whose hashes were read (`Store.get_match_hashes`), in
        order; a match with no hash (gone) has none."""
        return [row for match_id, raw in zip(match_ids, hashes, strict=True)
                if (row := self._row(match_id, raw)) is not None]

    def _row(self, match_id: str, raw: Mapping[bytes, bytes]) -> Row | None:
        row = self.rows.get(match_id)
        if row is not None and row.raw == raw:
            self.rows.move_to_end(match_id)
            return row
        match = match_fields(raw)
        if match is None:
            self.rows.pop(match_id, None)
            return None
        row = self.rows[match_id] = Row(raw, match)
        self.rows.move_to_end(match_id)
        while len(self.rows) > self.size:
            self.rows.popitem(last=False)
        return row
