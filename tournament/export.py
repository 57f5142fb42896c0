"""Decision records of finished matches, for training (issue 30): what `referee export` and
`GET /export/{game}` read.

Matches are read in the order the results log recorded their results (`Store.log_entries`):
a list that only grows at its end, so a position in it (a `Cursor`) stays valid however
many matches finish after it. Each match's records (`referee.match.decisions`) are read in
step order; a cursor can stop anywhere between two records and resume exactly there.

Who may read what: every record of a match whose deal is public (the match and every
match on its deal are over, `tournament.deals`); of a match whose deal is still secret,
the seats a reader may see (`SecretSeats`: the admin all of them, an account the seats of
its own bots, anyone else none). A reader who sees only some seats of a secret deal stops
there: its cursor holds at that match, having read the seats it may, and reads the rest
once the deal is public, so that following the cursor gives each record exactly once, and
in the end the same records as a full export.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from referee.errors import RefereeError
from referee.match.compact import StoredReplayError
from referee.match.decisions import Decision, MatchRecords, decisions
from referee.match.replay import Record
from tournament.deals import secret_deals
from tournament.store import ExportSource, MatchStatus, Store

BATCH = 200
"""Matches of the results log read in one round trip."""
CURSOR_FORMAT = "x1"
MAX_INDEX = (1 << 53) - 1
MAX_STEP = (1 << 31) - 1
MAX_MASK = (1 << 16) - 1

SecretSeats = Callable[[dict[str, Any]], int]
"""The seats (a mask: bit n, seat n) a reader may see of a match whose deal is secret."""


class ExportError(RefereeError):
    """A cursor or a `since` that cannot be read (`field` names which)."""

    def __init__(self, field_name: str, reason: str):
        super().__init__(reason)
        self.field = field_name
        self.reason = reason


@dataclass(frozen=True)
class Cursor:
    """A place in a game's export: the match at `index` of the results log, at `step` of
    the pass reading the seats `doing` (0: no pass started), the seats `done` read before."""

    index: int = 0
    step: int = 0
    done: int = 0
    doing: int = 0

    def encode(self, game: str) -> str:
        """The opaque form clients pass back (base64url, tied to its game)."""
        text = f"{CURSOR_FORMAT}.{game}.{self.index}.{self.step}.{self.done}.{self.doing}"
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str, game: str) -> Cursor:
        """The cursor `encode` wrote for `game` (ExportError for anything else)."""
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("ascii")
            kind, of_game, *numbers = raw.split(".")
            index, step, done, doing = (int(number) for number in numbers)
        except (binascii.Error, UnicodeDecodeError, ValueError):
            raise ExportError("cursor", "not a cursor this server gave") from None
        if kind != CURSOR_FORMAT or not all(number.isdigit() for number in numbers):
            raise ExportError("cursor", "not a cursor this server gave")
        if of_game != game:
            raise ExportError("cursor", f"a cursor of the export of {of_game!r}, not {game!r}")
        if index > MAX_INDEX or step > MAX_STEP or max(done, doing) > MAX_MASK:
            raise ExportError("cursor", "not a cursor this server gave")
        return cls(index, step, done, doing)


def parse_since(text: str) -> datetime:
    """A time as ISO 8601 (`2026-05-01`, `2026-05-01T12:00:00Z`; UTC when it names no zone)
    or seconds since the epoch (`1777593600`); ExportError otherwise."""
    try:
        moment = datetime.fromtimestamp(float(text), UTC)
    except (ValueError, OverflowError, OSError):
        try:
            moment = datetime.fromisoformat(text.strip())
        except ValueError:
            raise ExportError("since", f"{text!r} is neither an ISO 8601 time nor seconds "
                                       "since the epoch") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _finished_time(match: dict[str, Any]) -> datetime | None:
    at = match.get("finished_at")
    return None if at is None else datetime.fromisoformat(at.replace("Z", "+00:00"))


@dataclass(frozen=True)
class Pass:
    """The records to read of one match: those of the seats `seats` from step `start` on.
    Once they are all read the cursor is `after`."""

    index: int
    source: ExportSource
    seats: int
    start: int
    done: int
    after: Cursor

    @cached_property
    def record(self) -> Record:
        """The match's replay, decoded where the pass is read."""
        return self.source.record()

    def cursor_after(self, step: int) -> Cursor:
        """The cursor after the record of `step` of this pass."""
        return Cursor(self.index, step + 1, self.done, self.seats)

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """(step, NDJSON line) of each record of the pass, in step order."""
        head = MatchRecords.of(self.record)
        for decision in self.decisions():
            yield decision.step, head.line(decision)

    def decisions(self) -> Iterator[Decision]:
        """The decisions of the pass, in step order."""
        return decisions(self.record, self.seats, self.start, self.source.kept)


@dataclass(frozen=True)
class Scanned:
    """Progress over the log: every match before `cursor` has been looked at."""

    cursor: Cursor


def passes(store: Store, game: str, cursor: Cursor, since: datetime | None = None,
           secret_seats: SecretSeats | None = None) -> Iterator[Pass | Scanned | Cursor]:
    """From `cursor` on, the passes to read over the finished matches of `game` (finished
    at `since` or later), with `Scanned` after each batch of matches looked at, until
    nothing more may be read now: the log's end, or a match of a secret deal whose other
    seats the reader may not see yet, where the last item is the `Cursor` that holds there.
    `secret_seats` None: the reader sees every seat (the admin)."""
    index, size = cursor.index, store.log_size()
    while index < size:
        entries = store.log_entries(index, min(index + BATCH, size))
        matches = store.get_matches([match_id for _, match_id, _ in entries])
        secret = _secret(store, secret_seats, [match for match in matches
                                               if match is not None and match["game"] == game])
        wanted = [(at, match) for (at, _, _), match in zip(entries, matches, strict=True)
                  if match is not None and _wanted(match, game, since,
                                                   cursor if at == cursor.index else Cursor(at))]
        sources = Sources(store, [match["id"] for _, match in wanted])
        for at, match in wanted:
            start = cursor if at == cursor.index else Cursor(at)
            found = _pass(sources, match, at, start, secret_seats if match["id"] in secret
                          else None)
            if found is not None:
                yield found
            held = start if found is None else found.after
            if held.index == at:
                yield held
                return
        index = entries[-1][0] + 1 if entries else size
        yield Scanned(Cursor(index))


def _secret(store: Store, secret_seats: SecretSeats | None,
            matches: list[dict[str, Any]]) -> set[str]:
    """The ids of those `matches` whose deal is secret (none for a reader who sees all)."""
    return set() if secret_seats is None else secret_deals(store, matches)


def _wanted(match: dict[str, Any], game: str, since: datetime | None, start: Cursor) -> bool:
    """A finished match of `game`, finished at `since` or later (a match the cursor holds
    at was wanted before)."""
    if match["game"] != game or match["status"] != MatchStatus.FINISHED:
        return False
    if start.done or start.doing or since is None:
        return True
    ended = _finished_time(match)
    return ended is not None and ended >= since


class Sources:
    """The replays and kept decisions of matches to read in this order, read from Redis a
    growing chunk at a time (1, 2, 4... up to `MAX_CHUNK` matches a round trip): a short
    page reads little more than it needs, a long export makes few round trips."""

    MAX_CHUNK = 32

    def __init__(self, store: Store, match_ids: list[str]):
        self.store = store
        self.pending = list(reversed(match_ids))
        self.read: dict[str, ExportSource] = {}
        self.chunk = 1

    def get(self, match_id: str) -> ExportSource:
        while match_id not in self.read and self.pending:
            ids = [self.pending.pop() for _ in range(min(self.chunk, len(self.pending)))]
            self.read.update(zip(ids, self.store.get_export_sources(ids), strict=True))
            self.chunk = min(2 * self.chunk, self.MAX_CHUNK)
        if match_id not in self.read:
            return self.store.get_export_sources([match_id])[0]
        return self.read.pop(match_id)


def _pass(sources: Sources, match: dict[str, Any], index: int, start: Cursor,
          secret_seats: SecretSeats | None) -> Pass | None:
    """The pass to read of the match at `index` from `start` (None: nothing may be read
    of it now, the cursor holds there)."""
    every = (1 << match["num_players"]) - 1
    visible = every if secret_seats is None else secret_seats(match) & every
    # A cursor is the client's to write: the seats it names are cut to the visible ones.
    before, seats, step = start.done & every, start.doing & visible, start.step
    if not seats:
        seats, step = visible & ~before, 0
        if not seats:
            return None
    done = before | seats
    after = Cursor(index + 1) if done == every else Cursor(index, 0, done, 0)
    source = sources.get(match["id"])
    if not source.found:
        raise StoredReplayError(f"match {match['id']} is finished but has no replay")
    return Pass(index, source, seats, step, before, after)


@dataclass
class Page:
    """One page of an export: its NDJSON lines, the cursor after them, and whether more
    may be read now (False: the export has caught up, or holds at a secret deal)."""

    lines: list[bytes] = field(default_factory=list)
    cursor: Cursor = Cursor()
    more: bool = False
    size: int = 0


def read_page(store: Store, game: str, cursor: Cursor, limit: int, max_bytes: int,
              max_scanned: int, since: datetime | None = None,
              secret_seats: SecretSeats | None = None) -> Page:
    """At most `limit` records (and about `max_bytes`) from `cursor`, looking at no more than
    `max_scanned` matches of the log (those of other games included)."""
    page = Page(cursor=cursor)
    for item in passes(store, game, cursor, since, secret_seats):
        if isinstance(item, Scanned):
            page.cursor = item.cursor
            if item.cursor.index - cursor.index >= max_scanned:
                page.more = True
                return page
        elif isinstance(item, Cursor):
            page.cursor = item
        else:
            for step, line in item.lines():
                page.lines.append(line)
                page.size += len(line)
                page.cursor = item.cursor_after(step)
                if len(page.lines) >= limit or page.size >= max_bytes:
                    page.more = True
                    return page
            page.cursor = item.after
            time.sleep(0)  # under gevent (`referee serve`), the worker's other requests run
    return page
