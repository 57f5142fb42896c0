"""The bot URL policy: the one accepted URL form and the host allowlist
(`REFEREE_BOT_HOSTS`; docs/architecture.md, "Bot URLs").

A name entry (`localhost`) only admits that name in a URL; the address the bot client
actually connects to must fall inside an address or network entry (`address_allowed`), so a
name that resolves elsewhere fails at connect time, and a name alone admits nothing.
"""

from __future__ import annotations

import ipaddress
import re
from functools import cache
from urllib.parse import urlsplit

from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

DEFAULT_BOT_HOSTS = "localhost,127.0.0.0/8,::1"
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_allowlist(text: str) -> tuple[str, ...]:
    """Comma-separated entries, each a host name or an IP address or network."""
    entries = tuple(entry.strip().lower() for entry in text.split(",") if entry.strip())
    for entry in entries:
        if _network(entry) is None and _name_problem(entry):
            raise ValueError(f"{entry!r} is neither a host name nor an IP address or network")
    return entries


def address_allowed(ip: str, allowlist: tuple[str, ...]) -> bool:
    """Whether the address a bot client connects to falls inside an address or network
    entry of the allowlist (name entries admit no address). An IPv4-mapped IPv6 address
    counts as its IPv4 address; an address with a zone id (`fe80::1%eth0`) is refused."""
    try:
        address = ipaddress.ip_address(ip.strip("[]"))
    except ValueError:
        return False
    if address.version == 6:
        if address.scope_id is not None:
            return False
        address = address.ipv4_mapped or address
    return any(address in network for network in _networks(allowlist))


def host_allowed(host: str, allowlist: tuple[str, ...]) -> bool:
    """Whether a bot URL may name `host`: an address inside an address or network entry,
    or a name equal to a name entry (case-insensitive)."""
    host = host.lower().strip("[]")
    if _network(host) is not None:
        return address_allowed(host, allowlist)
    return any(host == entry.lower() for entry in allowlist if _network(entry) is None)


@cache
def _networks(allowlist: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    return tuple(net for net in map(_network, allowlist) if net is not None)


def _network(entry: str) -> IPNetwork | None:
    """The entry as a network (an address is a network of one), or None for a name."""
    try:
        return ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return None


def _ipv6_pattern() -> str:
    """RFC 3986's IPv6address, without an embedded IPv4 part (ls32 is two groups)."""
    h = "[0-9A-Fa-f]{1,4}"

    def head(more: int) -> str:  # up to `more` + 1 groups before "::"
        return f"(?:(?:{h}:){{0,{more}}}{h})?"

    return "|".join([
        f"(?:{h}:){{6}}{h}:{h}", f"::(?:{h}:){{5}}{h}:{h}", f"(?:{h})?::(?:{h}:){{4}}{h}:{h}",
        f"{head(1)}::(?:{h}:){{3}}{h}:{h}", f"{head(2)}::(?:{h}:){{2}}{h}:{h}",
        f"{head(3)}::{h}:{h}:{h}", f"{head(4)}::{h}:{h}", f"{head(5)}::{h}", f"{head(6)}::",
    ])


_IPV6 = _ipv6_pattern()
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_PORT_NUMBER = ("(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}"
                "|[1-9][0-9]{0,3})")
BOT_URL_PATTERN = (
    "^https?://"
    f"(?:{_OCTET}(?:\\.{_OCTET}){{3}}"  # a dotted-quad IPv4 address
    f"|\\[(?:{_IPV6})\\]"  # a bracketed IPv6 address, no zone id
    f"|(?:{_LABEL}\\.)*[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?)"  # a name; its last label
    f"(?::{_PORT_NUMBER})?"                                     # starts with a letter
    "(?:[/?#][!-\\[\\]-~]*)?"  # path, query, fragment: printable ASCII but backslash
    "(?!\\n)$"
)
"""A bot URL the referee accepts, as a regular expression (ECMA-262 and Python alike; it
is the `url` pattern in openapi.yaml): http(s), a canonical host, a decimal port from 1 to
65535, then printable ASCII without backslash. No userinfo, whitespace, control or
non-ASCII characters, percent-encoded hosts, IPv6 zone ids, nor IPv4 written any other
way than a.b.c.d (`127.1`, `0x7f.0.0.1`, `2130706433`, `0177.0.0.1`)."""
_BOT_URL = re.compile(BOT_URL_PATTERN)


def bot_url_problem(url: str, allowlist: tuple[str, ...]) -> str | None:
    """Why a bot URL is refused (its form, then its host), or None."""
    return url_syntax_problem(url) or host_problem(url, allowlist)


def host_problem(url: str, allowlist: tuple[str, ...]) -> str | None:
    """Why the host of a well-formed bot URL is refused, or None."""
    host = parse_url(url).host or ""
    if host_allowed(host, allowlist):
        return None
    return f"host {host!r} is not in the bot host allowlist (REFEREE_BOT_HOSTS)"


def url_syntax_problem(url: str) -> str | None:
    """Why a bot URL is not unambiguous, or None. It must match BOT_URL_PATTERN, and
    urllib3's parser (the one the bot client connects with) must agree with
    `urllib.parse` on its host and port."""
    if _BOT_URL.match(url) and _parsers_agree(url):
        return None
    for diagnose in (_scheme_problem, _character_problem, _authority_problem):
        problem = diagnose(url)
        if problem:
            return problem
    if not _parsers_agree(url):
        return "URL parsers disagree on this URL's host or port"
    return "not a canonical http(s) URL (see the pattern of `url` in openapi.yaml)"


def _parsers_agree(url: str) -> bool:
    try:
        ours, theirs = parse_url(url), urlsplit(url)
        return ((ours.host or "").strip("[]"), ours.port) == (theirs.hostname, theirs.port)
    except (LocationParseError, ValueError):
        return False


def _scheme_problem(url: str) -> str | None:
    if url.startswith(("http://", "https://")):
        return None
    return "a bot URL must start with http:// or https:// (lowercase)"


def _character_problem(url: str) -> str | None:
    bad = next((char for char in url if not "!" <= char <= "~" or char == "\\"), None)
    if bad is None:
        return None
    if bad == "\\":
        return "a bot URL may not contain a backslash (URL parsers disagree on what it means)"
    if bad.isspace():
        return "a bot URL may not contain whitespace"
    if not bad.isascii():
        return f"a bot URL must be ASCII ({bad!r} is not; percent-encode the path)"
    return f"a bot URL may not contain control characters ({bad!r})"


_AUTHORITY = re.compile(r"^(?P<host>\[[^\]]*\]|[^:\[\]]*)(?::(?P<port>.*))?$")


def authority(url: str) -> str:
    """The URL's authority: what follows `scheme://` up to the first `/`, `?` or `#`."""
    rest = url.partition("://")[2]
    return re.split(r"[/?#]", rest, maxsplit=1)[0]


def _authority_problem(url: str) -> str | None:
    text = authority(url)
    if "@" in text:
        return ("a bot URL may not carry credentials (user:password@host): they would be "
                "stored and shown with the bot")
    parts = _AUTHORITY.match(text)
    if parts is None:
        return f"{text!r} is not a valid host[:port]"
    port = parts["port"]
    if port is not None and not re.fullmatch(_PORT_NUMBER, port):
        return f"the port {port!r} is not a number from 1 to 65535 (without leading zeros)"
    return _host_problem(parts["host"])


def _host_problem(host: str) -> str | None:
    if not host:
        return "a bot URL needs a host"
    if "%" in host:
        return ("a bot URL's host may not be percent-encoded nor carry an IPv6 zone id "
                f"({host!r})")
    if host.startswith("["):
        if not re.fullmatch(_IPV6, host[1:-1]):
            return (f"{host!r} is not an IPv6 address in brackets (IPv4 addresses go without "
                    "brackets, and without an IPv6 prefix)")
        return None
    last_label = host.rsplit(".", 1)[-1]
    if last_label[:1].isdigit():
        return f"{host!r} is not an IPv4 address in canonical dotted-quad form (a.b.c.d)"
    return _name_problem(host)


def _name_problem(name: str) -> str | None:
    if re.fullmatch(f"(?:{_LABEL}\\.)*[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?", name):
        return None
    return (f"{name!r} is not a host name (labels of letters, digits and inner hyphens, "
            "separated by single dots, the last one starting with a letter)")


def without_credentials(url: str) -> str:
    """The URL without any userinfo (`user:password@`), for showing a stored bot URL."""
    text = authority(url)
    if "@" not in text:
        return url
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{text.rpartition('@')[2]}{rest[len(text):]}"

