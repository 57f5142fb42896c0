"""Server configuration from the environment (docs/design.md section 5b, a public contract).

A value that does not parse is a `ConfigError` naming its variable; the `referee` command
prints it as one line (`referee: error: ...`) and exits with status 2.

- `REDIS_URL` (default `redis://127.0.0.1:6379/0`): the one Redis of API and workers, or
  the primary of a Sentinel set, `redis+sentinel://[:PASSWORD@]HOST:PORT[,HOST:PORT...]/
  MASTER[/DB]`, which API and workers follow through a failover (docs/operations.md,
  Redis Sentinel); `REDIS_SENTINELS` (`HOST:PORT,...`) with `REDIS_MASTER` say the same
- `REDIS_WAIT_REPLICAS` (default 1 with Sentinel, else 0) and `REDIS_WAIT_TIMEOUT_MS`
  (default 500): the writes that must not be lost at a failover (a counted result, a
  rating, a signed tree head) wait until that many replicas hold them, at most that long
  (Redis `WAIT`); 0 waits for none. The same as the URL's `?wait_replicas=N&wait_timeout_ms=T`
- `REFEREE_ADMIN_TOKEN` (`referee serve` generates one when unset): admin writes
- `REFEREE_METRICS_TOKEN` (optional): reads `GET /metrics` and nothing else, for the
  monitoring system (the admin token reads it too)
- `REFEREE_SIGNING_KEY_FILE`: PEM PKCS#8 Ed25519 private keys, the last one current, that
  records and tree heads are signed with (`referee.match.sealing`; `referee keys rotate`
  adds one). `referee serve` and `referee worker` refuse to start without it unless
- `REFEREE_HMAC_ONLY=1` chooses HMAC-only: records are sealed with `REFEREE_SECRET`, and only
  a holder of the secret can check them
- `REFEREE_SECRET`: the HMAC key of HMAC-only records, and of records written before Ed25519
  (they keep verifying with it)
- `REFEREE_VERIFY_RATE` (default `30/60`): at most N `POST /replays/verify` per client
  address in any S seconds (`N/S`, a moving window); more get 429 with Retry-After
- `REFEREE_BOT_HOSTS` (default `localhost,127.0.0.0/8,::1`): host names, addresses and
  networks that bot URLs may point at. A name entry (`localhost`) only admits that name in
  a URL; the address the bot client actually connects to must fall inside an address or
  network entry (`address_allowed`), so a name that resolves elsewhere fails at connect
  time, and a name alone admits nothing
- `REFEREE_TRUSTED_PROXIES` (default none): the addresses or networks of the reverse proxies
  in front of the API; a request from one of them is counted for the client address its
  `X-Forwarded-For` names (the rightmost entry that is not a trusted proxy), in the bounds
  per client address below and in the access log (`referee.api.proxies`): a
  request from elsewhere keeps its own address, whatever its headers say
- `REFEREE_STREAMS_PER_ADDRESS` (default 32, 0: no bound) and `REFEREE_STREAMS_PER_PROCESS`
  (default 500): the live streams one API process holds open for one client address, and
  in all (keep it under `referee serve --worker-connections`, so that other requests are
  still served); more get 429 `stream/too-many` or 503 `stream/server-full`
- `REFEREE_MOVE_RATE` (default `60/10`): at most N moves posted per seat token in any S
  seconds (`N/S`, a moving window); more get 429 with Retry-After
- `REFEREE_BOT_MAX_MATCHES` (default 8): matches one bot plays at once; a match over the
  cap waits for a slot before it starts
- `REFEREE_WORKER_CONCURRENCY` (default 100): matches one `referee worker` process drives
  at once, unless `--concurrency` says otherwise
- `REFEREE_WORKER_NICE` (default 19, 0 to 19): the niceness a `referee worker` gives itself
  as it starts (and its session's autogroup, when it leads its session; at 19 it also joins
  an idle cgroup when it may), so an API on the same machine answers first; 0 leaves it as
  started (`--nice` overrides)
- `REFEREE_WORKER_BATCH` (default 1): a `referee worker` schedules itself as a batch job
  (Linux's `SCHED_BATCH`): woken by a bot's answer, it does not preempt what runs (the
  other workers among them), and reads more answers a wake-up (0: the usual policy)
- `REFEREE_PUBLIC_URL` (default `http://127.0.0.1:8000`): the API's address as bots reach
  it, for the `replay_url` of the result notice sent to bots after each match
- `REFEREE_SIGNUP` (default `closed`): who may create an account (`POST /accounts`):
  `closed` the admin only, `invite` whoever holds a one-time code from `POST /invites`,
  `open` anyone (at most `REFEREE_SIGNUP_RATE`, default `5/3600`, per client address)
- Quotas per account (docs/architecture.md, Accounts): `REFEREE_QUOTA_BOTS` (default 10
  bots not retired), `REFEREE_QUOTA_MATCHES_PER_DAY` (500, a tournament's matches included),
  `REFEREE_QUOTA_CONCURRENT_MATCHES` (20 not over), `REFEREE_QUOTA_TOURNAMENTS_PER_DAY` (10),
  `REFEREE_QUOTA_TOKENS` (20 live tokens); a day is a UTC day, or a window of
  `REFEREE_QUOTA_DAY_S` seconds when that is set (a test's short day)
- `REFEREE_ARCHIVE_DIR` (optional): where `referee archive` moves finished replays, and
  where the API reads them back (the same directory on every machine: docs/operations.md)
- `REFEREE_HOSTED_DIR` (default `<tempdir>/referee-hosted`): where a hosted worker unpacks
  the builds it runs, shared by the hosted workers of the machine; of the builds no seat
  runs it keeps at most `REFEREE_HOSTED_CACHE_BUILDS` (default 500) and
  `REFEREE_HOSTED_CACHE_MB` (default 2048) of files, the least recently used going first;
  writable by its user alone, and refused when it is a link or another user's folder
  (`tournament.build_cache`)
- `REFEREE_KEEP_DECISIONS_S` (default 0: not kept): how long the decisions a worker sent in
  a match (each observation and its legal actions) stay in Redis after it, for the export
  to read instead of playing the match again (`referee.match.decisions`)
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import TypeVar
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import redis

from referee.errors import RefereeError
from referee.match.sealing import KeyFileError, Sealer
from referee.match.urls import DEFAULT_BOT_HOSTS, bot_url_problem, host_problem, parse_allowlist

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
SENTINEL_SCHEME = "redis+sentinel"
SENTINEL_PORT = 26379
DEFAULT_WAIT_TIMEOUT_MS = 500
WAIT_OPTIONS = {"wait_replicas": "REDIS_WAIT_REPLICAS", "wait_timeout_ms": "REDIS_WAIT_TIMEOUT_MS"}
SIGNUP_MODES = ("closed", "invite", "open")
DEFAULT_SIGNUP_RATE = (5, 3600)


@dataclass(frozen=True)
class Quotas:
    """What one account may have or do (`REFEREE_QUOTA_<NAME>`); days are UTC days."""

    bots: int = 10
    matches_per_day: int = 500
    concurrent_matches: int = 20
    tournaments_per_day: int = 10
    tokens: int = 20
    day_s: int = 86400

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Quotas:
        defaults = cls()
        return cls(**{item.name: _setting(env, f"REFEREE_QUOTA_{item.name.upper()}",
                                          positive_int, getattr(defaults, item.name))
                      for item in fields(cls)})
MAX_BODY_BYTES = 1 << 20
DEFAULT_MOVE_RATE = (60, 10)
DEFAULT_VERIFY_RATE = (30, 60)
DEFAULT_BOT_MAX_MATCHES = 8
DEFAULT_PUBLIC_URL = "http://127.0.0.1:8000"
DEFAULT_CONCURRENCY = 100
# A worker yields the CPU to an API beside it by default (docs/operations.md, API and
# workers on one machine): bots that answer at once make match play CPU-bound.
DEFAULT_WORKER_NICE = 19
DEFAULT_HOSTED_CACHE_BUILDS = 500
DEFAULT_HOSTED_CACHE_MB = 2048
DEFAULT_STREAMS_PER_ADDRESS = 32
DEFAULT_STREAMS_PER_PROCESS = 500
MAX_NICE = 19
MAX_PORT = 65535
T = TypeVar("T")


class ConfigError(RefereeError, ValueError):
    """An environment variable's value does not parse; the message names the variable."""


@dataclass(frozen=True)
class Config:
    """Everything the API needs to know; built from the environment or by tests."""

    redis_url: str = DEFAULT_REDIS_URL
    admin_token: str = ""
    metrics_token: str = ""
    secret: str = ""
    signing_key_file: str = ""
    hmac_only: bool = False
    bot_hosts: tuple[str, ...] = tuple(DEFAULT_BOT_HOSTS.split(","))
    max_body_bytes: int = MAX_BODY_BYTES
    move_wait_s: float = 5.0
    move_rate: tuple[int, int] = DEFAULT_MOVE_RATE
    verify_rate: tuple[int, int] = DEFAULT_VERIFY_RATE
    bot_max_matches: int = DEFAULT_BOT_MAX_MATCHES
    public_url: str = DEFAULT_PUBLIC_URL
    worker_concurrency: int = DEFAULT_CONCURRENCY
    worker_nice: int = DEFAULT_WORKER_NICE
    worker_batch: bool = True
    archive_dir: str = ""
    keep_decisions_s: int = 0
    hosted_dir: str = ""
    hosted_cache_builds: int = DEFAULT_HOSTED_CACHE_BUILDS
    hosted_cache_mb: int = DEFAULT_HOSTED_CACHE_MB
    trusted_proxies: tuple[str, ...] = ()
    streams_per_address: int = DEFAULT_STREAMS_PER_ADDRESS
    streams_per_process: int = DEFAULT_STREAMS_PER_PROCESS
    signup: str = "closed"
    signup_rate: tuple[int, int] = DEFAULT_SIGNUP_RATE
    quotas: Quotas = Quotas()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Config:
        env = os.environ if environ is None else environ
        return cls(
            redis_url=redis_url_from_env(env),
            admin_token=env.get("REFEREE_ADMIN_TOKEN", ""),
            metrics_token=env.get("REFEREE_METRICS_TOKEN", ""),
            secret=env.get("REFEREE_SECRET", ""),
            signing_key_file=env.get("REFEREE_SIGNING_KEY_FILE", "").strip(),
            hmac_only=_setting(env, "REFEREE_HMAC_ONLY", parse_flag, False),
            bot_hosts=_setting(env, "REFEREE_BOT_HOSTS", parse_allowlist,
                               parse_allowlist(DEFAULT_BOT_HOSTS)),
            move_rate=_setting(env, "REFEREE_MOVE_RATE", parse_rate, DEFAULT_MOVE_RATE),
            verify_rate=_setting(env, "REFEREE_VERIFY_RATE", parse_rate, DEFAULT_VERIFY_RATE),
            bot_max_matches=_setting(env, "REFEREE_BOT_MAX_MATCHES", positive_int,
                                     DEFAULT_BOT_MAX_MATCHES),
            public_url=env.get("REFEREE_PUBLIC_URL") or DEFAULT_PUBLIC_URL,
            worker_concurrency=_setting(env, "REFEREE_WORKER_CONCURRENCY", positive_int,
                                        DEFAULT_CONCURRENCY),
            worker_nice=_setting(env, "REFEREE_WORKER_NICE", niceness, DEFAULT_WORKER_NICE),
            worker_batch=_setting(env, "REFEREE_WORKER_BATCH", parse_flag, True),
            archive_dir=env.get("REFEREE_ARCHIVE_DIR", "").strip(),
            keep_decisions_s=_setting(env, "REFEREE_KEEP_DECISIONS_S", natural, 0),
            hosted_dir=env.get("REFEREE_HOSTED_DIR", "").strip(),
            hosted_cache_builds=_setting(env, "REFEREE_HOSTED_CACHE_BUILDS", positive_int,
                                         DEFAULT_HOSTED_CACHE_BUILDS),
            hosted_cache_mb=_setting(env, "REFEREE_HOSTED_CACHE_MB", positive_int,
                                     DEFAULT_HOSTED_CACHE_MB),
            trusted_proxies=_setting(env, "REFEREE_TRUSTED_PROXIES", parse_networks, ()),
            streams_per_address=_setting(env, "REFEREE_STREAMS_PER_ADDRESS", natural,
                                         DEFAULT_STREAMS_PER_ADDRESS),
            streams_per_process=_setting(env, "REFEREE_STREAMS_PER_PROCESS", positive_int,
                                         DEFAULT_STREAMS_PER_PROCESS),
            signup=_setting(env, "REFEREE_SIGNUP", parse_signup, "closed"),
            signup_rate=_setting(env, "REFEREE_SIGNUP_RATE", parse_rate, DEFAULT_SIGNUP_RATE),
            quotas=Quotas.from_env(env),
        )

    def sealer(self) -> Sealer:
        """What this process seals records and tree heads with: the key file's keys, or
        the secret when HMAC-only was chosen; a ConfigError saying what to set when
        neither (a server must not write records nobody outside can check)."""
        if self.signing_key_file and self.hmac_only:
            raise ConfigError("REFEREE_SIGNING_KEY_FILE and REFEREE_HMAC_ONLY are both set: "
                              "choose one (docs/operations.md, Signing keys)")
        if self.signing_key_file:
            try:
                return Sealer.from_key_file(self.signing_key_file, self.secret)
            except KeyFileError as error:
                raise ConfigError(f"REFEREE_SIGNING_KEY_FILE: {error}") from None
        if self.hmac_only:
            if not self.secret:
                raise ConfigError("REFEREE_HMAC_ONLY=1 needs REFEREE_SECRET, the HMAC key")
            return Sealer.hmac(self.secret)
        raise ConfigError("REFEREE_SIGNING_KEY_FILE is not set: make a key file with "
                          "`referee keys rotate --key-file FILE` and point it there, or set "
                          "REFEREE_HMAC_ONLY=1 to sign with REFEREE_SECRET only "
                          "(docs/operations.md, Signing keys)")

    def bot_url_problem(self, url: str) -> str | None:
        """Why a bot URL is refused, or None when it is unambiguous and its host allowed."""
        return bot_url_problem(url, self.bot_hosts)

    def bot_host_problem(self, url: str) -> str | None:
        """Why the host of a well-formed bot URL is not allowed, or None."""
        return host_problem(url, self.bot_hosts)


def _setting(env: Mapping[str, str], name: str, parse: Callable[[str], T], default: T) -> T:
    """The variable `name` parsed, or `default` when it is unset or empty; a value that
    does not parse is a ConfigError naming the variable (a URL's password hidden)."""
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        return parse(text)
    except ValueError as error:
        raise ConfigError(f"{name}={_shown(text)!r}: {error}") from None


def parse_redis_url(text: str) -> str:
    """A URL `redis_target` reads, checked without connecting."""
    redis_target(text)
    return text


@dataclass(frozen=True)
class RedisTarget:
    """What a Redis URL names: one Redis (`url`, as redis-py reads it), or the primary that
    the Sentinels of `sentinels` name `master`; and how many replicas a write that must not
    be lost waits for (`wait_replicas`, 0: none), at most `wait_timeout_ms`."""

    url: str = ""
    sentinels: tuple[tuple[str, int], ...] = ()
    master: str = ""
    db: int = 0
    username: str | None = None
    password: str | None = None
    wait_replicas: int = 0
    wait_timeout_ms: int = DEFAULT_WAIT_TIMEOUT_MS


def redis_target(text: str) -> RedisTarget:
    """Read a Redis URL: what redis-py accepts (`redis://`, `rediss://`, `unix://`, its
    query options) or `redis+sentinel://[[USER]:PASSWORD@]HOST[:PORT][,HOST[:PORT]...]/
    MASTER[/DB]`, either with `wait_replicas` and `wait_timeout_ms` (`WAIT_OPTIONS`);
    ValueError saying what is wrong."""
    parts = urlsplit(text)
    query = parse_qsl(parts.query, keep_blank_values=True)
    options = {key: value for key, value in query if key in WAIT_OPTIONS}
    others = [(key, value) for key, value in query if key not in WAIT_OPTIONS]
    sentinel = parts.scheme == SENTINEL_SCHEME
    wait_replicas = natural(options.get("wait_replicas", "1" if sentinel else "0"))
    wait_timeout_ms = positive_int(options.get("wait_timeout_ms", str(DEFAULT_WAIT_TIMEOUT_MS)))
    if not sentinel:
        # the query rebuilt by hand: urlunsplit writes unix:///path as unix:/path
        url = text.split("?", 1)[0] + (f"?{urlencode(others)}" if others else "")
        redis.ConnectionPool.from_url(url)
        return RedisTarget(url=url, wait_replicas=wait_replicas, wait_timeout_ms=wait_timeout_ms)
    if others:
        raise ValueError(f"a Sentinel URL takes no option {others[0][0]!r} (only "
                         f"{' and '.join(WAIT_OPTIONS)})")
    credentials, _, hosts = parts.netloc.rpartition("@")
    username, _, password = credentials.partition(":")
    master, _, db = parts.path.strip("/").partition("/")
    if not hosts or not master:
        raise ValueError(f"expected {SENTINEL_SCHEME}://HOST:PORT[,HOST:PORT...]/MASTER[/DB]")
    return RedisTarget(sentinels=tuple(_host_port(host) for host in hosts.split(",")),
                       master=unquote(master), db=natural(db or "0"),
                       username=unquote(username) or None, password=unquote(password) or None,
                       wait_replicas=wait_replicas, wait_timeout_ms=wait_timeout_ms)


def _host_port(text: str) -> tuple[str, int]:
    """`HOST[:PORT]` (`[V6ADDRESS][:PORT]`) of a Sentinel, the port 26379 by default."""
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":")
    else:
        host, _, port = text.partition(":")
    if not host:
        raise ValueError(f"a Sentinel {text!r} without a host")
    number = positive_int(port) if port else SENTINEL_PORT
    if number > MAX_PORT:
        raise ValueError(f"a Sentinel {text!r} with a port over {MAX_PORT}")
    return host, number


def redis_url_from_env(env: Mapping[str, str]) -> str:
    """REDIS_URL (or the Sentinel set of REDIS_SENTINELS and REDIS_MASTER) with the options
    of REDIS_WAIT_REPLICAS and REDIS_WAIT_TIMEOUT_MS, checked; a ConfigError naming what is
    wrong."""
    sentinels, master = (env.get(name, "").strip() for name in ("REDIS_SENTINELS",
                                                                  "REDIS_MASTER"))
    source, url = "REDIS_URL", env.get("REDIS_URL", "").strip() or DEFAULT_REDIS_URL
    if sentinels or master:
        if env.get("REDIS_URL", "").strip():
            raise ConfigError("REDIS_URL and REDIS_SENTINELS are both set: choose one")
        if not (sentinels and master):
            raise ConfigError("REDIS_SENTINELS and REDIS_MASTER go together (the Sentinels, "
                              "and the name they know the primary by)")
        source, url = "REDIS_SENTINELS", f"{SENTINEL_SCHEME}://{sentinels}/{master}/0"
    for option, variable in WAIT_OPTIONS.items():
        if value := env.get(variable, "").strip():
            url = _with_option(url, option, value)
            source = f"{source} with {variable}"
    try:
        return parse_redis_url(url)
    except ValueError as error:
        raise ConfigError(f"{source}={_shown(url)!r}: {error}") from None


def _with_option(url: str, option: str, value: str) -> str:
    parts = urlsplit(url)
    query = [(key, old) for key, old in parse_qsl(parts.query, keep_blank_values=True)
             if key != option]
    return urlunsplit(parts._replace(query=urlencode([*query, (option, value)])))


def _shown(text: str) -> str:
    """`text` for an error message: a URL's password as ***, or nothing of a value that
    has a password but cannot be parsed."""
    try:
        return redacted_url(text)
    except ValueError:
        return "(not shown)" if "@" in text else text


def parse_rate(text: str) -> tuple[int, int]:
    """`N/S`: N moves per S seconds, both positive integers (`N` alone: per second)."""
    count, _, seconds = text.partition("/")
    return positive_int(count), positive_int(seconds or "1")


def parse_signup(text: str) -> str:
    mode = text.strip().lower()
    if mode not in SIGNUP_MODES:
        raise ValueError(f"expected one of {', '.join(SIGNUP_MODES)}")
    return mode


def parse_networks(text: str) -> tuple[str, ...]:
    """Comma-separated IP addresses or networks (`10.0.0.0/8`), normalized; no names."""
    entries = [entry.strip() for entry in text.split(",") if entry.strip()]
    networks = []
    for entry in entries:
        try:
            networks.append(str(ipaddress.ip_network(entry, strict=False)))
        except ValueError:
            raise ValueError(f"{entry!r} is not an IP address or network") from None
    return tuple(networks)


def parse_flag(text: str) -> bool:
    """`1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`, any case."""
    word = text.strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected 1 or 0 (true/false, yes/no, on/off)")


def positive_int(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"{text!r} is not a positive integer")
    return int(text)


def natural(text: str) -> int:
    """0 or a positive integer."""
    if not text.strip().isdigit():
        raise ValueError(f"{text!r} is not 0 or a positive integer")
    return int(text)


def niceness(text: str) -> int:
    """A nice value a process may give itself: 0 (unchanged) to 19 (the lowest priority)."""
    if not text.strip().isdigit() or int(text) > MAX_NICE:
        raise ValueError(f"{text!r} is not a niceness from 0 to {MAX_NICE}")
    return int(text)


def redacted_url(url: str) -> str:
    """The URL with any password replaced by ***, for printing."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))
