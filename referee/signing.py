"""Signed requests to bots: `Referee-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>`.

The HMAC key is the bot's secret (answered once by `POST /bots`), the message is
`"<t>." + the raw request body`, so a bot can tell the referee from anyone else and a
captured request cannot be replayed long after its timestamp.
"""

from __future__ import annotations

import hashlib
import hmac

HEADER = "Referee-Signature"


def signature_header(secret: str, body: bytes, timestamp: int) -> str:
    """The header value signing `body` at `timestamp` (unix seconds) with `secret`."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"
