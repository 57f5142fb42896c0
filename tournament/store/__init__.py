"""Everything the referee keeps in Redis: every key, hash field and Lua script, and every
read and write of them, one module per concept.

- `keys`: every key builder, the fields of the hashes, the statuses, the channel messages
- `scripts`: every Lua script, registered once per client
- `codec`: values as JSON; `base`: the client every part shares, its connection limits,
  `durably` (the writes that wait for a replica); `connection`: connecting to the
  configured Redis or Sentinel set, the one place every process does
- `matches`, `pull`, `bots`, `hosted` (uploaded bots' sources, builds, stderr),
  `tournaments`, `ladders`, `ratings` (counting, leaderboard), `work` (work lists),
  `timers`,
  `running` (the recovery's reads), `live` (event streams), `metrics` (the cluster's
  counters), `limits`, `archive` (its Redis side), `queues` (rq's, on the same Redis),
  `log` (the results log's Merkle tree), `signing_keys` (the published public keys):
  the operations of each concept, composed into `Store` (a synchronous client)
- `progress`: the driver's lease-fenced writes, on an asyncio client (`Progress`)

Values are JSON (orjson), never a Python-only format; the bigger values of a match are
stored compactly (`referee.match.compact`: deflated with a preset dictionary, read back as
they were written; plain JSON written by earlier versions reads as it is).
"""

from __future__ import annotations

import redis

from tournament.archive_files import ReplayArchive
from tournament.store.accounts import Accounts
from tournament.store.archive import ArchiveSide
from tournament.store.base import MAX_CONNECTIONS, RETRIES, RETRY_CAP_S, SOCKET_TIMEOUT_S
from tournament.store.bots import Bots
from tournament.store.codec import dumps, loads
from tournament.store.connection import connect, retrying
from tournament.store.hosted import Hosted
from tournament.store.keys import (
    FINISHED,
    HOSTED_QUEUE,
    MATCH_QUEUE,
    QUEUES,
    BuildStatus,
    MatchStatus,
    archive_cursor_key,
    bot_key,
    events_channel,
    lease_key,
    match_key,
    playing_key,
    ratings_events_channel,
    ratings_key,
    running_key,
    tournament_events_channel,
    tournament_key,
)
from tournament.store.ladders import Ladders
from tournament.store.limits import Limits
from tournament.store.live import Channels
from tournament.store.log import ResultsLog
from tournament.store.matches import (
    ExportSource,
    Matches,
    MatchMeta,
    MatchSeat,
    SeatDeadline,
    bot_seats,
    match_fields,
    new_match_meta,
    seat_deadline_ms,
)
from tournament.store.metrics import CounterStore
from tournament.store.progress import Progress
from tournament.store.pull import PullSeats, token_digest
from tournament.store.queues import (
    Queues,
    command_channel,
    end_job,
    in_one_round_trip,
    start_job,
)
from tournament.store.ratings import Ratings
from tournament.store.running import Running
from tournament.store.scripts import Scripts
from tournament.store.signing_keys import SigningKeys
from tournament.store.timers import Timers
from tournament.store.tournaments import Tournaments

__all__ = [
    "FINISHED", "ExportSource", "HOSTED_QUEUE", "MATCH_QUEUE", "QUEUES", "BuildStatus", "MatchMeta",
    "MatchSeat", "MatchStatus", "Progress",
    "SeatDeadline", "Store", "archive_cursor_key", "command_channel", "end_job",
    "in_one_round_trip", "start_job",
    "bot_key", "bot_seats", "dumps", "events_channel", "lease_key", "loads", "match_fields",
    "match_key", "new_match_meta", "playing_key", "ratings_events_channel", "ratings_key",
    "running_key", "seat_deadline_ms", "token_digest", "tournament_events_channel",
    "tournament_key",
]


class Store(Accounts, Bots, Matches, PullSeats, Tournaments, Ladders, Hosted, Ratings, Timers,
            Running, Channels, CounterStore, Limits, ArchiveSide, Queues, ResultsLog, SigningKeys):
    """The referee's Redis data, through one synchronous client."""

    def __init__(self, client: redis.Redis, archive: ReplayArchive | None = None):
        self.redis = client
        self.archive = archive
        self.scripts = Scripts(client.register_script)

    @classmethod
    def from_url(cls, url: str, archive: ReplayArchive | None = None) -> Store:
        """A client of what `url` names (a Redis, or a Sentinel set's primary:
        `tournament.store.connection`) that retries briefly (under a second in all), so an
        unreachable Redis turns into a quick 503 rather than a hanging request. Its socket
        timeout (`SOCKET_TIMEOUT_S`) bounds a hung Redis and outlasts every blocking wait
        (`wait_applied`). `archive` reads the replays moved out of Redis (`referee
        archive`)."""
        return cls(connect(url, max_connections=MAX_CONNECTIONS, pool_wait_s=SOCKET_TIMEOUT_S,
                           socket_timeout=SOCKET_TIMEOUT_S,
                           retry=retrying(RETRIES, RETRY_CAP_S)), archive)

    def ping(self) -> bool:
        try:
            return bool(self.redis.ping())
        except redis.RedisError:
            return False
