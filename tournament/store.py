"""Everything the referee keeps in Redis, and every Redis key it uses, built in one place.

Values are JSON (orjson), never a Python-only format; the bigger values of a match are
stored compactly (`referee.match.compact`: deflated with a preset dictionary, read back as they
were written; plain JSON written by earlier versions reads as it is). Keys, all under the
prefix `referee:`:

- `bot:{id}` (string): a registered bot; `bots` (sorted set): bot ids by registration time
- `match:{id}` (hash): `meta` (packed JSON, fixed at creation), `status`, `step`, `to_move`,
  `result` (packed JSON), `forfeit`, `error`, `started_at`, `finished_at`, `attempt`
  (after a dead worker), while it runs `asked_at` (Redis time in ms when the current
  decision was put) and `parked` (the step a parked match waits at for its pull seat),
  `deadline_timer` (the timer set at that seat's deadline), `wakes` and `deferrals`
  (counters that make those jobs' ids unique). Once its replay is archived
  (`tournament.archive`) only `status` and `archived` (packed: everything `get_match`
  answers, and `archive`, the replay's file under REFEREE_ARCHIVE_DIR) are left
- `match:{id}:tokens` (hash): seat -> sha256 of its token (the token is never stored)
- `match:{id}:live` (string): `{"step", "state"}`, the state the current decision is asked in
  (while the match runs: with the steps, it is what a worker continues the match from)
- `match:{id}:steps` (list): step records as they are played (while the match runs)
- `match:{id}:replay` (string): the finished replay record in its stored form
  (`referee.match.compact`), until it is archived
- `match:{id}:inbox:{seat}` (list): moves posted by a pull seat's client, `{"step", "action"}`
- `match:{id}:claim:{step}` (string, expires): set by the first move accepted for that step
- `match:{id}:applied:{step}` (list, expires): pushed once the runner has moved past that
  step (popped by the request waiting for it)
- `matches`, `matches:{game}` (sorted sets): match ids by creation time, all and per game
- `match:{id}:lease` (string, expires): the driver playing the match, renewed while it runs
- `match:{id}:events` (pub/sub channel, no key): each recorded step's number, then "end"
- `running` (sorted set): matches with a driver (not parked), for the recovery sweep
- `timers` (sorted set): `"{match id} {reason}"` by when (Redis time, ms) the match's job
  `reason` is to be queued (`tournament.jobs`)
- `archive:cursor:{game}` (string): a creation time (the score in `matches:{game}`) before
  which every match of the game is archived or has nothing to archive (failed)
- `tournament:{id}` (hash): `meta` (JSON), `finished_at`, `ratings` (JSON, at the end)
- `tournament:{id}:matches` (list): match ids in schedule order
- `tournament:{id}:done` / `tournament:{id}:failed` (sets): match ids counted as played / failed
- `tournament:{id}:results` (hash): match id -> the match's result (seats, ranks, scores, faults)
- `tournament:{id}:events` (pub/sub channel, no key): the id of each match counted, then
  "finished" once the final ratings are stored
- `tournament:{id}:sprt` / `tournament:{id}:swiss` (string, JSON): an SPRT's or a Swiss
  tournament's progress (`tournament.formats`: pairs counted and the test's state; rounds)
- `tournaments` (sorted set): tournament ids by creation time
- `ratings:{game}:counted` (set): every match id whose outcome was counted (counted once)
- `ratings:{game}:elo` / `ratings:{game}:games` (hashes): bot id -> live Elo / rated matches
- `ratings:{game}:results` (list): rated results in the order they were counted
- `ratings:{game}:history:{bot}` (list): `[n, rating]` after each of the bot's rated matches
- `ratings:{game}:intervals` (hash): bot id -> its latest tournament's Bradley-Terry row
- `ratings:{game}:events` (pub/sub channel, no key): the id of each rated match counted, and
  "intervals" when a tournament's intervals are stored
- `ratings:{game}:page` (string): the leaderboard's rows as `GET /ratings/{game}` answers
  them, `{version}\n{row}\n{row}...`, valid while the version (rated results counted,
  intervals) is unchanged
- `ratelimit:moves:{token sha256}:{window}` (string, expires): moves posted with one seat
  token in one fixed window of the move rate limit
- `bot:{id}:playing` (set): the matches holding one of the bot's concurrent-match slots

- `metrics:*` (hashes): the cluster's counters (`tournament.metrics`)

rq keeps its own keys under `rq:`; the queue name is `MATCH_QUEUE`.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import orjson
import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from referee.match import compact
from referee.match.replay import utc_now

if TYPE_CHECKING:
    from tournament.archive import ReplayArchive

PREFIX = "referee:"
MATCH_QUEUE = "referee-matches"
QUEUES = (MATCH_QUEUE,)
SIGNAL_TTL_S = 3600
RETRIES = 3
SOCKET_TIMEOUT_S = 15.0
# Connections one client may hold at once: as many as an API process serves requests at
# once (`referee serve --worker-connections`), each of which may block in a wait for its
# move (`wait_applied`). Past it, a command waits for a free connection (up to the socket
# timeout) rather than failing.
MAX_CONNECTIONS = 1000
ARCHIVED = "archived"  # the one field besides `status` of an archived match's hash


class MatchStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"


def new_match_meta(game: str, game_version: str, seats: list[dict], options: dict, seed: int,
                   policy: dict, deadline_ms: int, pull_deadline_ms: int,
                   match_id: str | None = None, **tags: Any) -> dict:
    """A new match's record as `create_match` stores it (a fresh id unless given); `tags`
    add fields such as the tournament it belongs to."""
    return {
        "id": match_id or f"m-{secrets.token_hex(8)}", "game": game,
        "game_version": game_version, "num_players": len(seats), "seats": seats,
        "options": options, "seed": seed, "policy": policy, "deadline_ms": deadline_ms,
        "pull_deadline_ms": pull_deadline_ms, "created_at": utc_now(), **tags,
    }


def seat_deadline_ms(match: dict, seat: int) -> int:
    """A seat's deadline per decision: its own when it was given one, else the match's for
    its kind (`deadline_ms` for a bot, `pull_deadline_ms` for a pull seat)."""
    info = match["seats"][seat]
    default = match["deadline_ms"] if info["kind"] == "bot" else match["pull_deadline_ms"]
    return info.get("deadline_ms", default)


def bot_seats(bots: list[tuple[str, str]]) -> list[dict]:
    """The seats of a match between registered bots, from (bot id, seat name) in seat order."""
    return [{"seat": seat, "kind": "bot", "bot_id": bot_id, "name": name}
            for seat, (bot_id, name) in enumerate(bots)]


def bot_key(bot_id: str) -> str:
    return f"{PREFIX}bot:{bot_id}"


def bots_key() -> str:
    return f"{PREFIX}bots"


def matches_key(game: str | None = None) -> str:
    """Every match id by creation time, or only those of one game."""
    return f"{PREFIX}matches" if game is None else f"{PREFIX}matches:{game}"


def match_key(match_id: str, part: str | None = None) -> str:
    """`match:{id}` or one of its parts (`tokens`, `live`, `steps`, `replay`, ...)."""
    base = f"{PREFIX}match:{match_id}"
    return f"{base}:{part}" if part else base


def inbox_key(match_id: str, seat: int) -> str:
    return match_key(match_id, f"inbox:{seat}")


def claim_key(match_id: str, step: int) -> str:
    return match_key(match_id, f"claim:{step}")


def applied_key(match_id: str, step: int) -> str:
    return match_key(match_id, f"applied:{step}")


def events_channel(match_id: str) -> str:
    """The pub/sub channel where a match's driver announces each recorded step (its
    number) and the end ("end")."""
    return match_key(match_id, "events")


def lease_key(match_id: str) -> str:
    return match_key(match_id, "lease")


def running_key() -> str:
    return f"{PREFIX}running"


def timers_key() -> str:
    return f"{PREFIX}timers"


def archive_cursor_key(game: str) -> str:
    return f"{PREFIX}archive:cursor:{game}"


def tournaments_key() -> str:
    return f"{PREFIX}tournaments"


def tournament_key(tournament_id: str, part: str | None = None) -> str:
    """`tournament:{id}` or one of its parts (`matches`, `done`, `failed`, `results`,
    `sprt`, `swiss`)."""
    base = f"{PREFIX}tournament:{tournament_id}"
    return f"{base}:{part}" if part else base


def tournament_events_channel(tournament_id: str) -> str:
    """The pub/sub channel where counting announces a tournament's counted matches (their
    ids) and its end ("finished")."""
    return tournament_key(tournament_id, "events")


def ratings_events_channel(game: str) -> str:
    """The pub/sub channel where counting announces a change of the game's leaderboard."""
    return ratings_key(game, "events")


def ratings_key(game: str, part: str) -> str:
    """`ratings:{game}:{part}`: `counted`, `elo`, `games`, `results`, `intervals` or
    `page`."""
    return f"{PREFIX}ratings:{game}:{part}"


def history_key(game: str, bot_id: str) -> str:
    return ratings_key(game, f"history:{bot_id}")


def rate_key(token_sha256: str, window: int) -> str:
    return f"{PREFIX}ratelimit:moves:{token_sha256}:{window}"


def playing_key(bot_id: str) -> str:
    return f"{bot_key(bot_id)}:playing"


def token_digest(token: str) -> str:
    """What is stored of a seat token: its sha256, compared in constant time."""
    return hashlib.sha256(token.encode()).hexdigest()


def dumps(value: Any) -> bytes:
    return orjson.dumps(value)


def loads(data: bytes | None) -> Any:
    return None if data is None else orjson.loads(data)


def match_fields(fields: dict[bytes, bytes]) -> dict | None:
    """A match hash as `Store.get_match` answers it: meta merged with the status fields
    (an archived match: its packed summary, with `archive`, the replay's file)."""
    if not fields:
        return None
    text = {k.decode(): v for k, v in fields.items()}
    if ARCHIVED in text:
        return compact.unpack(text[ARCHIVED])
    match = compact.unpack(text["meta"])
    match.update(
        status=text["status"].decode(),
        step=int(text["step"]),
        to_move=loads(text.get("to_move")),
        result=compact.unpack(text.get("result")),
        forfeit=loads(text.get("forfeit")),
        error=text["error"].decode() if "error" in text else None,
        started_at=text["started_at"].decode() if "started_at" in text else None,
        finished_at=text["finished_at"].decode() if "finished_at" in text else None,
    )
    return match


def match_meta(client: redis.Redis | redis.client.Pipeline, match_id: str) -> dict | None:
    """The match's meta (archived or not) read on `client`, e.g. a pipeline in WATCH."""
    meta, archived = client.hmget(match_key(match_id), "meta", ARCHIVED)
    return compact.unpack(meta if meta is not None else archived)


def _seat_of(tokens: dict[bytes, bytes], token: str) -> int | None:
    """The seat whose stored token digest matches `token`, compared in constant time (every
    digest is compared, whichever matches)."""
    digest = token_digest(token)
    seat = None
    for key, stored in tokens.items():
        if hmac.compare_digest(stored.decode(), digest):
            seat = int(key)
    return seat


# KEYS: the step's claim, the seat's inbox; ARGV: seat, claim TTL, the move.
CLAIM_AND_PUSH = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then
  redis.call('RPUSH', KEYS[2], ARGV[3])
  return 1
end
return 0
"""


class Store:
    """The referee's Redis data: bots, matches, live states, pull moves, replays."""

    def __init__(self, client: redis.Redis, archive: ReplayArchive | None = None):
        self.redis = client
        self.archive = archive
        self._claim_and_push = client.register_script(CLAIM_AND_PUSH)

    @classmethod
    def from_url(cls, url: str, archive: ReplayArchive | None = None) -> Store:
        """A client that retries briefly (under a second in all), so an unreachable Redis
        turns into a quick 503 rather than a hanging request. Its socket timeout
        (`SOCKET_TIMEOUT_S`) bounds a hung Redis and outlasts every blocking wait
        (`wait_applied`). `archive` reads the replays moved out of Redis (`referee
        archive`)."""
        pool = redis.BlockingConnectionPool.from_url(
            url, max_connections=MAX_CONNECTIONS, timeout=SOCKET_TIMEOUT_S,
            socket_timeout=SOCKET_TIMEOUT_S,
            retry=Retry(ExponentialBackoff(cap=0.4, base=0.05), RETRIES))
        return cls(redis.Redis(connection_pool=pool), archive)

    def ping(self) -> bool:
        try:
            return bool(self.redis.ping())
        except redis.RedisError:
            return False

    # ----- bots --------------------------------------------------------------------
    def save_bot(self, bot: dict) -> None:
        with self.redis.pipeline() as pipe:
            pipe.set(bot_key(bot["id"]), dumps(bot))
            pipe.zadd(bots_key(), {bot["id"]: time.time()})
            pipe.execute()

    def get_bot(self, bot_id: str) -> dict | None:
        return loads(self.redis.get(bot_key(bot_id)))

    def get_bots(self, bot_ids: list[str]) -> list[dict | None]:
        """`get_bot` of every id, in one round trip."""
        if not bot_ids:
            return []
        return [loads(raw) for raw in self.redis.mget([bot_key(i) for i in bot_ids])]

    def list_bots(self) -> list[dict]:
        """Every registered bot, by registration time."""
        return self.bot_page(0, -1)[0]

    def bot_page(self, offset: int, limit: int) -> tuple[list[dict], int]:
        """One page of the bots by registration time (`limit` -1: all after `offset`), and
        how many there are."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrange(bots_key(), offset, offset + limit - 1 if limit >= 0 else -1)
            pipe.zcard(bots_key())
            ids, total = pipe.execute()
        return [bot for bot in self.get_bots([i.decode() for i in ids]) if bot], total

    # ----- matches -----------------------------------------------------------------
    def create_match(self, meta: dict, state: dict, to_move: int | None,
                     token_digests: dict[int, str],
                     pipe: redis.client.Pipeline | None = None) -> None:
        """Store a new match, queued, with its initial state as the live state; on `pipe`,
        which the caller executes, when given (many matches in one round trip)."""
        if pipe is None:
            with self.redis.pipeline() as own:
                self.create_match(meta, state, to_move, token_digests, own)
                own.execute()
            return
        match_id = meta["id"]
        pipe.hset(match_key(match_id), mapping={
            "meta": compact.pack(meta), "status": MatchStatus.QUEUED.value, "step": 0,
            "to_move": dumps(to_move),
        })
        if token_digests:
            pipe.hset(match_key(match_id, "tokens"),
                      mapping={str(seat): digest for seat, digest in token_digests.items()})
        pipe.set(match_key(match_id, "live"), dumps({"step": 0, "state": state}))
        created = time.time()
        pipe.zadd(matches_key(), {match_id: created})
        pipe.zadd(matches_key(meta["game"]), {match_id: created})

    def get_match(self, match_id: str) -> dict | None:
        """The match's meta merged with its current status fields, or None."""
        return match_fields(self.redis.hgetall(match_key(match_id)))

    def get_matches(self, match_ids: list[str]) -> list[dict | None]:
        """`get_match` of every id, in one round trip."""
        with self.redis.pipeline(transaction=False) as pipe:
            for match_id in match_ids:
                pipe.hgetall(match_key(match_id))
            return [match_fields(fields) for fields in pipe.execute()]

    def current_attempt(self, match_id: str) -> int:
        """How many times the match was queued again after its worker died (0 at first)."""
        return int(self.redis.hget(match_key(match_id), "attempt") or 0)

    def list_match_ids(self, offset: int, limit: int,
                       game: str | None = None) -> tuple[list[str], int]:
        """Newest first (of one game, or all): one page of ids and the total count."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrevrange(matches_key(game), offset, offset + limit - 1)
            pipe.zcard(matches_key(game))
            ids, total = pipe.execute()
        return [i.decode() for i in ids], total

    def seat_view(self, match_id: str,
                  token: str | None) -> tuple[dict | None, int | None, dict | None]:
        """What a pull seat's request needs, in one round trip: the match (or None), the
        seat whose token this is (or None) and the live state."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(match_key(match_id))
            pipe.hgetall(match_key(match_id, "tokens"))
            pipe.get(match_key(match_id, "live"))
            fields, tokens, live = pipe.execute()
        seat = _seat_of(tokens, token) if token is not None else None
        return match_fields(fields), seat, loads(live)

    def steps(self, match_id: str) -> list[dict]:
        return [loads(raw) for raw in self.redis.lrange(match_key(match_id, "steps"), 0, -1)]

    def get_replay(self, match_id: str) -> dict | None:
        """The finished match's sealed replay, from Redis or from the archive
        (`referee.match.compact.StoredReplayError` when it cannot be read back here)."""
        data, archived = self._stored_replay(match_id)
        if archived is not None:
            return self._archived_replay(match_id, archived)
        return None if data is None else compact.decode(data)

    def get_replay_steps(self, match_id: str) -> dict | None:
        """The finished match's replay, its steps without state hashes unless archived (no
        re-run)."""
        data, archived = self._stored_replay(match_id)
        if archived is not None:
            return self._archived_replay(match_id, archived)
        return None if data is None else compact.decode_steps(data)

    def _stored_replay(self, match_id: str) -> tuple[bytes | None, str | None]:
        """(the stored form in Redis, None) or (None, the archive file): the archiver
        replaces one with the other atomically, so one transaction sees one of them."""
        with self.redis.pipeline() as pipe:
            pipe.get(match_key(match_id, "replay"))
            pipe.hget(match_key(match_id), ARCHIVED)
            data, archived = pipe.execute()
        return data, None if archived is None else compact.unpack(archived)["archive"]

    def _archived_replay(self, match_id: str, relative: str) -> dict:
        if self.archive is None:
            raise compact.StoredReplayError(
                f"the replay of match {match_id} is archived ({relative}) and this process "
                "has no REFEREE_ARCHIVE_DIR")
        return self.archive.read(relative, match_id)

    # ----- limits ------------------------------------------------------------------
    def count_move(self, token: str, limit: int, window_s: int, now: float) -> float | None:
        """Count one move posted with `token` in its fixed window of `window_s` seconds;
        None while within `limit`, else the seconds until the window ends. The count lives
        in Redis, so every API process shares it; only the token's sha256 is in the key."""
        window = int(now // window_s)
        key = rate_key(token_digest(token), window)
        with self.redis.pipeline() as pipe:
            pipe.incr(key)
            pipe.expire(key, window_s + 1)
            count, _ = pipe.execute()
        return None if count <= limit else (window + 1) * window_s - now

    # ----- ratings ----------------------------------------------------------------
    def kept_leaderboard(self, game: str) -> tuple[str, list[bytes] | None]:
        """(the version of the game's ratings, the leaderboard rows kept for that version
        or None).

        The version changes whenever the rows may: a rated match counted (the results
        list grows, with Elo, games and history, in the same transaction) or a tournament's
        intervals stored. Bots are never renamed."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.llen(ratings_key(game, "results"))
            pipe.hgetall(ratings_key(game, "intervals"))
            pipe.get(ratings_key(game, "page"))
            counted, intervals, kept = pipe.execute()
        digest = hashlib.sha256(b"\n".join(k + b"=" + v for k, v in sorted(intervals.items()))
                                ).hexdigest()[:16]
        version = f"{counted}/{digest}"
        if kept is None:
            return version, None
        kept_version, *rows = kept.split(b"\n")
        return version, rows if kept_version.decode() == version else None

    def keep_leaderboard(self, game: str, version: str, rows: list[bytes]) -> None:
        """Keep rows (JSON, one line each) built after reading `version` (a count in
        between only makes them look older than they are, so they are rebuilt on the next
        read, never served stale)."""
        self.redis.set(ratings_key(game, "page"), b"\n".join([version.encode(), *rows]))

    def rating_history(self, game: str, bot_id: str, offset: int,
                       limit: int) -> tuple[list[list], int]:
        """One page of the bot's `[n, Elo]` points, oldest first, and how many it has."""
        key = history_key(game, bot_id)
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.lrange(key, offset, offset + limit - 1)
            pipe.llen(key)
            points, total = pipe.execute()
        return [loads(point) for point in points], total

    # ----- pull seats --------------------------------------------------------------
    def post_move(self, match_id: str, seat: int, step: int, action: dict) -> bool:
        """Claim `step` and hand the move to the runner, atomically (a script): True for the
        first move posted for the step, False (and nothing posted) for any later one."""
        claimed = self._claim_and_push(
            keys=[claim_key(match_id, step), inbox_key(match_id, seat)],
            args=[seat, SIGNAL_TTL_S, dumps({"step": step, "action": action})])
        return bool(claimed)

    def wait_applied(self, match_id: str, step: int, timeout_s: float) -> bool:
        """Wait until the runner has played `step` (after a pull move was posted), at most
        `timeout_s` (kept under the socket timeout)."""
        timeout_s = min(timeout_s, SOCKET_TIMEOUT_S - 1)
        return self.redis.blpop([applied_key(match_id, step)], timeout=timeout_s) is not None
