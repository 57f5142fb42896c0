"""Signed requests to bots: the `Referee-Signature` header (issue 18, a public contract).

    Referee-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + raw body)>

The referee signs every request to a bot that has a secret; a bot that knows its secret
can tell the referee from anyone else, and a recorded request cannot be replayed later
than `tolerance_s`. As in Stripe's webhooks, a header may carry several `v1` values (while
a secret is rotated, one per secret) and schemes other than `v1` are ignored.
The bots' copies of `verify_signature` (`bots/python/sdk.py`, `bots/node/random_bot.js`
and the examples of `docs/bots.md`) follow this module.
"""

from __future__ import annotations

import hashlib
import hmac

from referee.errors import RefereeError

HEADER = "Referee-Signature"
SCHEME = "v1"
TOLERANCE_S = 300
MAX_HEADER_CHARS = 4096
MAX_TIMESTAMP_DIGITS = 12


class SignatureError(RefereeError, ValueError):
    """A request's signature is missing, malformed, stale or wrong; the message says which."""


def signature(secret: str, body: bytes, timestamp: int) -> str:
    """The hex HMAC-SHA256 of `"<timestamp>." + body` keyed with `secret`."""
    message = f"{timestamp}.".encode() + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_header(secret: str, body: bytes, timestamp: int) -> str:
    """The value of the `Referee-Signature` header for `body` sent at `timestamp`."""
    return f"t={timestamp},{SCHEME}={signature(secret, body, timestamp)}"


class RequestSigner:
    """`signature_header` for one secret, its HMAC key set up once (a client signs every
    request it sends with it)."""

    def __init__(self, secret: str):
        self.keyed = hmac.new(secret.encode(), digestmod=hashlib.sha256)

    def header(self, body: bytes, timestamp: int) -> str:
        mac = self.keyed.copy()
        mac.update(b"%d." % timestamp)
        mac.update(body)
        return f"t={timestamp},{SCHEME}={mac.hexdigest()}"


def verify_signature(secret: str, header: str | None, body: bytes, now: float,
                     tolerance_s: int = TOLERANCE_S) -> None:
    """Return when `header` signs `body` with `secret` at a time within `tolerance_s` of
    `now` (unix seconds); raise SignatureError saying what is wrong otherwise."""
    if not header:
        raise SignatureError(f"the {HEADER} header is missing")
    timestamp, candidates = parse_header(header)
    if abs(now - timestamp) > tolerance_s:
        raise SignatureError(f"the signature's timestamp t={timestamp} is more than "
                             f"{tolerance_s} s away from now ({int(now)})")
    expected = signature(secret, body, timestamp).encode()
    matches = [hmac.compare_digest(expected, candidate.encode()) for candidate in candidates]
    if not any(matches):
        raise SignatureError("the signature does not match the body (wrong secret, or the "
                             "body was changed)")


def parse_header(header: str) -> tuple[int, list[str]]:
    """(t, the v1 values) of a header `t=...,v1=...[,v1=...]`; SignatureError when malformed."""
    if len(header) > MAX_HEADER_CHARS:
        raise SignatureError(f"malformed {HEADER} header: longer than {MAX_HEADER_CHARS} "
                             "characters")
    timestamps, candidates = [], []
    for part in header.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep:
            raise SignatureError(f"malformed {HEADER} header: {part.strip()[:40]!r} is not "
                                 "key=value")
        if key == "t":
            timestamps.append(value)
        elif key == SCHEME:
            candidates.append(value.lower())
    if len(timestamps) != 1 or not _is_timestamp(timestamps[0]):
        raise SignatureError(f"malformed {HEADER} header: it needs exactly one t=<unix seconds>")
    if not candidates:
        raise SignatureError(f"malformed {HEADER} header: no {SCHEME}= signature")
    return int(timestamps[0]), candidates


def _is_timestamp(value: str) -> bool:
    return value.isascii() and value.isdigit() and len(value) <= MAX_TIMESTAMP_DIGITS
