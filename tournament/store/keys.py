"""Every Redis key the referee uses, built here and nowhere else (rq's `key_for` habit), with
the fields of its hashes, the statuses of a match and the messages of its channels.

Keys, all under the prefix `referee:`, and the module of `tournament.store` that reads and
writes each:

- `bot:{id}` (string): a registered bot; `bots` (sorted set): bot ids by registration
  time; `bot-name:{name as compared}` (string): the id of the bot of that name, retired
  ones included, and `bot-names:indexed` (string) once every bot's name is there (bots
  registered before the index were added to it at the first lookup); `bot:{id}:playing`
  (set): the matches holding one of the bot's concurrent-match slots (`bots`; the slots:
  `progress`)
- `account:{id}` (string): an account (JSON: id, name, created_at, suspended);
  `accounts` (sorted set): account ids by creation time; `account-name:{lowercase name}`
  (string): the id of the account of that name; `account:{id}:tokens` (hash): token id ->
  sha256 of the token; `account:{id}:bots` (set): its bots; `account:{id}:matches` (set):
  its matches not known to be over; `account:{id}:quota:{name}:{UTC day}` (string,
  expires): what it used of a daily quota (`accounts`)
- `token:{sha256}` (string, expires with the token): an account token (JSON: id, account,
  scopes, created_at, expires_at), never the token itself (`accounts`)
- `invite:{sha256}` (string, expires): a one-time sign-up code (`accounts`)
- `lock:{name}` (string, expires): a lock held while a check and the write it allows run
  (`BOT_NAMES_LOCK`, `bot_lock`, `account_lock`; `base`)
- `match:{id}` (hash, `MatchField`): `meta` (packed JSON, fixed at creation), `status`,
  `step`, `to_move`, `result` (packed JSON), `forfeit`, `error`, `started_at`,
  `finished_at`, `attempt` (after a dead worker), while it runs `asked_at` (Redis time in
  ms when the current decision was put) and `parked` (the step a parked match waits at for
  its pull seat), `deadline_timer` (the timer set at that seat's deadline), `wakes` and
  `deferrals` (counters that make those jobs' ids unique), once finished `log` (its index
  in the results log). Once its replay is archived only `status`, `log` and `archived`
  (packed: everything `get_match` answers, and `archive`, the replay's file under
  REFEREE_ARCHIVE_DIR) are left (`matches`, `progress`, `timers`, `running`, `archive`)
- `match:{id}:tokens` (hash): seat -> sha256 of its token, never the token (`pull`)
- `match:{id}:live` (string): `{"step", "state"}`, the state the current decision is asked
  in (while the match runs: with the steps, what a worker continues the match from)
- `match:{id}:steps` (list): step records as they are played (while the match runs)
- `match:{id}:replay` (string): the finished replay record in its stored form
  (`referee.match.compact`), until it is archived
- `match:{id}:inbox:{seat}` (list): moves posted by a pull seat's client, `{"step", "action"}`
- `match:{id}:claim:{step}` (string, expires): set by the first move accepted for that step
- `match:{id}:applied:{step}` (list, expires): pushed once the driver has moved past that
  step (popped by the request waiting for it)
- `match:{id}:lease` (string, expires): the driver playing the match, renewed while it runs
- `match:{id}:events` (pub/sub channel, no key): each recorded step's number, then `END`
- `matches`, `matches:{game}` (sorted sets): match ids by creation time, all and per game
- `running` (sorted set): matches with a driver (not parked), for the recovery sweep
  (`progress` adds and drops them, `running` reads them)
- `timers` (sorted set): `"{match id} {reason}"` by when (Redis time, ms) the match's job
  `reason` is to be queued (`timers`)
- `recovery:cursor` (string): where the recovery's round over `matches` goes on (a rank);
  `recovery:orphans` (sorted set): matches seen with nothing to wake them, by when (Redis
  time, ms) first seen so (`running`)
- `archive:cursor:{game}` (string): a creation time (the score in `matches:{game}`) before
  which every match of the game is archived or has nothing to archive (`archive`)
- `tournament:{id}` (hash, `TournamentField`): `meta` (JSON), `finished_at`, `ratings`
  (JSON, at the end); `tournaments` (sorted set): tournament ids by creation time
- `tournament:{id}:matches` (list): match ids in schedule order
- `tournament:{id}:done` / `:failed` (sets): match ids counted as played / failed
- `tournament:{id}:results` (hash): match id -> the match's result (seats, ranks, scores,
  faults)
- `tournament:{id}:sprt` / `:swiss` (string, JSON): an SPRT's or a Swiss tournament's
  bookkeeping (`tournament.formats`)
- `tournament:{id}:events` (pub/sub channel): the id of each match counted, then `FINISHED`
- `ratings:{game}:counted` (set): every match id whose outcome was counted (once)
- `ratings:{game}:elo` / `:games` (hashes): bot id -> live Elo / rated matches
- `ratings:{game}:results` (list): rated results in the order they were counted
- `ratings:{game}:history:{bot}` (list): `[n, rating]` after each of the bot's rated matches
- `ratings:{game}:intervals` (hash): bot id -> its latest tournament's Bradley-Terry row
- `ratings:{game}:skill` / `:skill:{players}` (hashes): bot id -> `[mu, sigma]`, its
  Weng-Lin skill (`tournament.skill`) over every rated match of the game / of the game
  with that many players
- `ratings:{game}:page` (string): the leaderboard's rows as `GET /ratings/{game}` answers
  them, `{version}\\n{row}\\n{row}...`, valid while the version is unchanged
- `ratings:{game}:events` (pub/sub channel): the id of each rated match counted, and
  `INTERVALS` when a tournament's intervals are stored (`ratings`, `tournaments`)
- `ladder:{id}` (string, JSON): a ladder's settings (`LadderPart`); `ladders` (sorted
  set): ladder ids by creation time
- `ladder:{id}:entries` (hash): bot id -> its entry (JSON: version, checking, mu, sigma,
  matches, version_matches, status, reasons, recent faults, last_match_at)
- `ladder:{id}:state` (string, JSON): matches scheduled so far and the running ones with
  their bots; with `entries`, what a ladder transaction WATCHes (`ladders`)
- `ladder:{id}:matches` (list): its match ids in schedule order; `:counted` (set): those
  counted (once); `:history` (list, capped): `[n, bot, ordinal]` after each rated seat
- `ladder:{id}:events` (pub/sub channel): `match {id}`, `standings`, `entry {bot}`
- `bot:{id}:ladders` (set): the ladders the bot entered
- `ladder-checks` (list): entry checks to run, `{"ladder", "bot", "version"}` (JSON);
  `ladder-checks:claimed` (sorted set): those a worker runs, by when it took them, so a
  dead worker's check is run again; `ladder-notices` (list): notices for push bots
- `hosted-bots` (set): the bots that are uploaded code (`hosted`, issue 29);
  `bot:{id}:source:{version}` (string): a hosted version's source files, a gzipped tar;
  `bot:{id}:build:{version}` (hash, `BuildField`): its build's status, log, times, worker,
  and its output (`artifact`, a gzipped tar of the built folder) once `ready`
- `bot-builds` (list): builds to run, `{"bot", "version"}` (JSON); `bot-builds:claimed`
  (sorted set): those a hosted worker runs, by when it took them (as `ladder-checks`)
- `hosted-languages` (hash): language -> what a hosted worker runs it with (JSON: name,
  version, build, run), written by each hosted worker as it starts
- `match:{id}:stderr` (hash, expires with `STDERR_TTL_S`): seat -> what its hosted program
  wrote on stderr, capped
- `log:level:{l}` (string): the results log's Merkle tree (`referee.match.merkle`): the
  32-byte hashes of its complete aligned subtrees of level l (l = 0, 4, 8...), in index
  order; level 0 is the leaf hashes, one per finished match in the order results were
  recorded (appended by the script that records the result); `log:complete` (string):
  the tree size up to which the levels above 0 are filled (`log`)
- `log:ids` (list): the match id of each leaf, in leaf order; `log:head` (string, JSON):
  the last signed tree head, served again while the tree and the key are unchanged (`log`)
- `signing-keys` (hash): key id -> `{"public_key", "not_before", "not_after"}` (JSON) of
  every Ed25519 key records were ever signed with; `signing-keys:current` (string): the id
  of the current one (`signing_keys`)
- `ratelimit:moves:{token sha256}` (sorted set, expires): the Redis times (ms) of the
  moves posted with one seat token within the move rate limit's moving window;
  `ratelimit:verify:{address sha256}` and `ratelimit:signup:{address sha256}`: replays
  verified, accounts signed up for, from one client address (`limits`)
- `metrics:{counter}` (hashes): the cluster's counters, fields JSON arrays of label values
  (`metrics`)

rq keeps its own keys under `rq:`; the match queue is `MATCH_QUEUE`, and a match with a
hosted seat is queued on `HOSTED_QUEUE`, which only `referee worker --hosted` takes
(`queues`).
"""

from __future__ import annotations

from enum import StrEnum

PREFIX = "referee:"
ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}"
"""What an id of a bot, match, tournament, ladder or token in a key may be (every id the
referee makes is one): no `:`, the keys' separator, so no id names another key's part
(`match:{id}:replay` is not the match of id `{id}:replay`)."""
MATCH_QUEUE = "referee-matches"
HOSTED_QUEUE = "referee-hosted"
QUEUES = (MATCH_QUEUE, HOSTED_QUEUE)
STDERR_TTL_S = 7 * 86400

# Messages on the channels, besides match ids and step numbers.
END = "end"  # on a match's channel: it is over
FINISHED = "finished"  # on a tournament's channel: its final ratings are stored
INTERVALS = "intervals"  # on a game's ratings channel: a tournament's intervals are stored


class MatchStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"


class MatchField(StrEnum):
    """The fields of a match's hash, `match:{id}`."""

    META = "meta"
    STATUS = "status"
    STEP = "step"
    TO_MOVE = "to_move"
    RESULT = "result"
    FORFEIT = "forfeit"
    ERROR = "error"
    STARTED_AT = "started_at"
    FINISHED_AT = "finished_at"
    ATTEMPT = "attempt"
    ASKED_AT = "asked_at"
    PARKED = "parked"
    DEADLINE_TIMER = "deadline_timer"
    WAKES = "wakes"
    DEFERRALS = "deferrals"
    LOG = "log"  # its leaf's index in the results log, once finished
    QUEUE = "queue"  # HOSTED_QUEUE for a match with a hosted seat; absent otherwise
    ARCHIVED = "archived"  # with `status` and `log`, all an archived match keeps


class MatchPart(StrEnum):
    """The keys of a match beside its hash: `match:{id}:{part}`."""

    TOKENS = "tokens"
    LIVE = "live"
    STEPS = "steps"
    REPLAY = "replay"
    DECISIONS = "decisions"  # the driver's kept decisions, for the export (till archived)
    LEASE = "lease"
    EVENTS = "events"
    STDERR = "stderr"


class BuildField(StrEnum):
    """The fields of a hosted bot version's build, `bot:{id}:build:{version}`."""

    STATUS = "status"  # BuildStatus
    LANGUAGE = "language"
    QUEUED_AT = "queued_at"
    STARTED_AT = "started_at"
    FINISHED_AT = "finished_at"
    SECONDS = "seconds"
    WORKER = "worker"
    LOG = "log"
    DIGEST = "digest"  # the artifact's sha256, hex
    ARTIFACT = "artifact"


class BuildStatus(StrEnum):
    """A hosted bot version's build; a bot plays only when its version is `ready`."""

    BUILDING = "building"
    READY = "ready"
    FAILED = "build_failed"


class TournamentField(StrEnum):
    """The fields of a tournament's hash, `tournament:{id}`."""

    META = "meta"
    FINISHED_AT = "finished_at"
    RATINGS = "ratings"


class TournamentPart(StrEnum):
    """The keys of a tournament beside its hash: `tournament:{id}:{part}` (a progressive
    format's bookkeeping is `tournament:{id}:{format}`)."""

    MATCHES = "matches"
    DONE = "done"
    FAILED = "failed"
    RESULTS = "results"
    EVENTS = "events"


class RatingsPart(StrEnum):
    """The keys of a game's ratings: `ratings:{game}:{part}`."""

    COUNTED = "counted"
    ELO = "elo"
    SKILL = "skill"
    GAMES = "games"
    RESULTS = "results"
    INTERVALS = "intervals"
    PAGE = "page"
    EVENTS = "events"


class LadderPart(StrEnum):
    """The keys of a ladder beside its settings: `ladder:{id}:{part}`."""

    ENTRIES = "entries"
    STATE = "state"
    MATCHES = "matches"
    COUNTED = "counted"
    HISTORY = "history"
    EVENTS = "events"


# ----- bots -------------------------------------------------------------------------------
# ----- accounts ---------------------------------------------------------------------------
def account_key(account_id: str, part: str | None = None) -> str:
    """`account:{id}` or one of its parts (`tokens`, `bots`, `matches`)."""
    base = f"{PREFIX}account:{account_id}"
    return f"{base}:{part}" if part else base


def accounts_key() -> str:
    return f"{PREFIX}accounts"


def account_name_key(name: str) -> str:
    return f"{PREFIX}account-name:{name.lower()}"


def account_quota_key(account_id: str, quota: str, day: str) -> str:
    return f"{account_key(account_id)}:quota:{quota}:{day}"


def token_key(token_sha256: str) -> str:
    return f"{PREFIX}token:{token_sha256}"


def invite_key(code_sha256: str) -> str:
    return f"{PREFIX}invite:{code_sha256}"


def lock_key(name: str) -> str:
    return f"{PREFIX}lock:{name}"


BOT_NAMES_LOCK = "bot-names"
"""The lock (`Store.serialized`) held while a bot's name is checked free and taken, and
while an account's bot quota is checked and a bot added, or an account deleted."""


def bot_lock(bot_id: str) -> str:
    """The lock held while a bot's record is read, changed and written (so that two
    changes never write over each other: a retirement undone), and while a match or
    tournament seating it is checked and stored."""
    return f"bot:{bot_id}"


def account_lock(account_id: str, quota: str) -> str:
    """The lock held while one of an account's quotas held at once is checked and taken."""
    return f"account:{account_id}:{quota}"


def bot_key(bot_id: str) -> str:
    return f"{PREFIX}bot:{bot_id}"


def bots_key() -> str:
    return f"{PREFIX}bots"


def bot_name_key(compared_name: str) -> str:
    return f"{PREFIX}bot-name:{compared_name}"


def bot_names_indexed_key() -> str:
    return f"{PREFIX}bot-names:indexed"


def hosted_bots_key() -> str:
    return f"{PREFIX}hosted-bots"


def bot_source_key(bot_id: str, version: int) -> str:
    return f"{PREFIX}bot:{bot_id}:source:{version}"


def bot_build_key(bot_id: str, version: int) -> str:
    return f"{PREFIX}bot:{bot_id}:build:{version}"


def builds_key(part: str | None = None) -> str:
    """`bot-builds`, or `bot-builds:claimed`."""
    return f"{PREFIX}bot-builds" + (f":{part}" if part else "")


def hosted_languages_key() -> str:
    return f"{PREFIX}hosted-languages"


def playing_key(bot_id: str) -> str:
    return f"{bot_key(bot_id)}:playing"


# ----- matches ----------------------------------------------------------------------------
def matches_key(game: str | None = None) -> str:
    """Every match id by creation time, or only those of one game."""
    return f"{PREFIX}matches" if game is None else f"{PREFIX}matches:{game}"


def match_key(match_id: str, part: str | None = None) -> str:
    """`match:{id}` or one of its parts (a `MatchPart`, an inbox, a claim, a signal)."""
    base = f"{PREFIX}match:{match_id}"
    return f"{base}:{part}" if part else base


def inbox_key(match_id: str, seat: int) -> str:
    return match_key(match_id, f"inbox:{seat}")


def claim_key(match_id: str, step: int) -> str:
    return match_key(match_id, f"claim:{step}")


def applied_key(match_id: str, step: int) -> str:
    return match_key(match_id, f"applied:{step}")


def lease_key(match_id: str) -> str:
    return match_key(match_id, MatchPart.LEASE)


def lease_key_pattern() -> tuple[str, str]:
    """(prefix, suffix) of every lease key, for a script that builds them from match ids."""
    prefix, _, suffix = lease_key("{}").partition("{}")
    return prefix, suffix


def events_channel(match_id: str) -> str:
    """Where a match's driver announces each recorded step (its number) and the end
    (`END`)."""
    return match_key(match_id, MatchPart.EVENTS)


def running_key() -> str:
    return f"{PREFIX}running"


def timers_key() -> str:
    return f"{PREFIX}timers"


def recovery_cursor_key() -> str:
    return f"{PREFIX}recovery:cursor"


def orphans_key() -> str:
    return f"{PREFIX}recovery:orphans"


def sweep_turn_key() -> str:
    """The worker whose recovery sweep is the cluster's latest (it lapses on its own)."""
    return f"{PREFIX}recovery:turn"


def archive_cursor_key(game: str) -> str:
    return f"{PREFIX}archive:cursor:{game}"


def replication_fence_key() -> str:
    """A counter written only to carry a WAIT for the writes before it (`Store.durably`)."""
    return f"{PREFIX}replication:fence"


def rate_key(token_sha256: str, kind: str = "moves") -> str:
    """A rate limit's moving window: `kind` (moves, verify, signup) and the sha256 of what
    is counted (a seat token, a client address)."""
    return f"{PREFIX}ratelimit:{kind}:{token_sha256}"


# ----- the results log and the signing keys ------------------------------------------------
def log_level_key(level: int) -> str:
    return f"{PREFIX}log:level:{level}"


def log_ids_key() -> str:
    return f"{PREFIX}log:ids"


def log_complete_key() -> str:
    return f"{PREFIX}log:complete"


def log_head_key() -> str:
    return f"{PREFIX}log:head"


def signing_keys_key() -> str:
    return f"{PREFIX}signing-keys"


def current_signing_key_key() -> str:
    return f"{PREFIX}signing-keys:current"


# ----- tournaments and ratings ------------------------------------------------------------
def tournaments_key() -> str:
    return f"{PREFIX}tournaments"


def tournament_key(tournament_id: str, part: str | None = None) -> str:
    """`tournament:{id}` or one of its parts (a `TournamentPart`, or a format's name)."""
    base = f"{PREFIX}tournament:{tournament_id}"
    return f"{base}:{part}" if part else base


def tournament_events_channel(tournament_id: str) -> str:
    """Where counting announces a tournament's counted matches (their ids) and its end
    (`FINISHED`)."""
    return tournament_key(tournament_id, TournamentPart.EVENTS)


def ratings_key(game: str, part: str) -> str:
    """`ratings:{game}:{part}`, a `RatingsPart`."""
    return f"{PREFIX}ratings:{game}:{part}"


def history_key(game: str, bot_id: str) -> str:
    return ratings_key(game, f"history:{bot_id}")


def skill_key(game: str, players: int | None = None) -> str:
    """A game's Weng-Lin skills: over all its rated matches, or those of `players` seats."""
    part = RatingsPart.SKILL if players is None else f"{RatingsPart.SKILL}:{players}"
    return ratings_key(game, part)


def ratings_events_channel(game: str) -> str:
    """Where counting announces a change of the game's leaderboard."""
    return ratings_key(game, RatingsPart.EVENTS)


# ----- ladders ----------------------------------------------------------------------------
def ladders_key() -> str:
    return f"{PREFIX}ladders"


def ladder_key(ladder_id: str, part: str | None = None) -> str:
    """`ladder:{id}` or one of its parts (a `LadderPart`)."""
    base = f"{PREFIX}ladder:{ladder_id}"
    return f"{base}:{part}" if part else base


def bot_ladders_key(bot_id: str) -> str:
    return f"{bot_key(bot_id)}:ladders"


def ladder_checks_key(part: str | None = None) -> str:
    """`ladder-checks`, or `ladder-checks:claimed`."""
    return f"{PREFIX}ladder-checks" + (f":{part}" if part else "")


def ladder_notices_key() -> str:
    return f"{PREFIX}ladder-notices"


# ----- metrics ----------------------------------------------------------------------------
class MetricCounter(StrEnum):
    """The cluster's counters: hashes `metrics:{counter}` whose fields are JSON arrays of
    label values (`tournament.store.metrics`)."""

    DECISIONS = "decisions"  # [game, bot] -> decisions asked
    DECISION_US = "decision_us"  # [game, bot] -> their summed duration, in microseconds
    DECISION_BUCKETS = "decision_buckets"  # [game, bot, le] -> decisions in that bucket
    FAULTS = "faults"  # [game, code] -> faults (timeout, crash, malformed, illegal)
    MATCHES = "matches"  # [game, status] -> matches that entered the status
    VERIFICATIONS = "verifications"  # [result] -> replays verified, valid or invalid


def metrics_key(counter: MetricCounter) -> str:
    return f"{PREFIX}metrics:{counter}"
