"""Server configuration from the environment (design.md section 5b, a public contract).

- `REDIS_URL` (default `redis://127.0.0.1:6379/0`): the one Redis of API and workers
- `REFEREE_ADMIN_TOKEN` (`referee serve` generates one when unset): admin writes
- `REFEREE_METRICS_TOKEN` (optional): reads `GET /metrics` and nothing else, for the
  monitoring system (the admin token reads it too)
- `REFEREE_SECRET`: the replay signing key
- `REFEREE_BOT_HOSTS` (default `localhost,127.0.0.0/8,::1`): host names, addresses and
  networks that bot URLs may point at
- `REFEREE_MOVE_RATE` (default `60/10`): at most N moves posted per seat token in each
  window of S seconds (`N/S`); more get 429 with Retry-After
- `REFEREE_BOT_MAX_MATCHES` (default 8): matches one bot plays at once; a match over the
  cap waits for a slot before it starts
- `REFEREE_PUBLIC_URL` (default `http://127.0.0.1:8000`): the API's address as bots reach
  it, for the `replay_url` of the result notice sent to bots after each match
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
DEFAULT_BOT_HOSTS = "localhost,127.0.0.0/8,::1"
MAX_BODY_BYTES = 1 << 20
DEFAULT_MOVE_RATE = (60, 10)
DEFAULT_BOT_MAX_MATCHES = 8
DEFAULT_PUBLIC_URL = "http://127.0.0.1:8000"
T = TypeVar("T")


@dataclass(frozen=True)
class Config:
    """Everything the API needs to know; built from the environment or by tests."""

    redis_url: str = DEFAULT_REDIS_URL
    admin_token: str = ""
    metrics_token: str = ""
    secret: str = ""
    bot_hosts: tuple[str, ...] = tuple(DEFAULT_BOT_HOSTS.split(","))
    max_body_bytes: int = MAX_BODY_BYTES
    move_wait_s: float = 5.0
    move_rate: tuple[int, int] = DEFAULT_MOVE_RATE
    bot_max_matches: int = DEFAULT_BOT_MAX_MATCHES
    public_url: str = DEFAULT_PUBLIC_URL

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Config:
        env = os.environ if environ is None else environ
        hosts = env.get("REFEREE_BOT_HOSTS") or DEFAULT_BOT_HOSTS
        return cls(
            redis_url=env.get("REDIS_URL") or DEFAULT_REDIS_URL,
            admin_token=env.get("REFEREE_ADMIN_TOKEN", ""),
            metrics_token=env.get("REFEREE_METRICS_TOKEN", ""),
            secret=env.get("REFEREE_SECRET", ""),
            bot_hosts=tuple(h.strip() for h in hosts.split(",") if h.strip()),
            move_rate=_setting(env, "REFEREE_MOVE_RATE", parse_rate, DEFAULT_MOVE_RATE),
            bot_max_matches=_setting(env, "REFEREE_BOT_MAX_MATCHES", positive_int,
                                     DEFAULT_BOT_MAX_MATCHES),
            public_url=env.get("REFEREE_PUBLIC_URL") or DEFAULT_PUBLIC_URL,
        )

    def bot_url_problem(self, url: str) -> str | None:
        """Why a bot URL is refused, or None when its scheme and host are allowed."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            return "a bot URL must start with http:// or https://"
        if not parts.hostname:
            return "a bot URL needs a host"
        if not host_allowed(parts.hostname, self.bot_hosts):
            return (f"host {parts.hostname!r} is not in the bot host allowlist "
                    "(REFEREE_BOT_HOSTS)")
        return None


def _setting(env: Mapping[str, str], name: str, parse: Callable[[str], T], default: T) -> T:
    """The variable `name` parsed, or `default` when it is unset or empty; a value that
    does not parse is a ValueError naming the variable."""
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        return parse(text)
    except ValueError as error:
        raise ValueError(f"{name}={text!r}: {error}") from None


def parse_rate(text: str) -> tuple[int, int]:
    """`N/S`: N moves per S seconds, both positive integers (`N` alone: per second)."""
    count, _, seconds = text.partition("/")
    return positive_int(count), positive_int(seconds or "1")


def positive_int(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"{text!r} is not a positive integer")
    return int(text)


def host_allowed(host: str, allowlist: tuple[str, ...]) -> bool:
    """A host name matches an entry exactly (case-insensitive); an address may also fall
    inside a network entry such as 127.0.0.0/8."""
    host = host.lower()
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for entry in allowlist:
        if host == entry.lower():
            return True
        if address is not None and "/" in entry:
            try:
                if address in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                continue
    return False


def address_allowed(address: str, allowlist: tuple[str, ...]) -> bool:
    """Whether a connection may go to `address` (an IP address as connected to): it must
    fall inside an address or network entry of the allowlist. A name entry only admits
    the name in URLs, so a name that resolves off the list is refused at connect time."""
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return False
    for entry in allowlist:
        try:
            if ip in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


def redacted_url(url: str) -> str:
    """The URL with any password replaced by ***, for printing."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))
