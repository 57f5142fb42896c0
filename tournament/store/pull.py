"""Pull seats: their tokens (only a digest is stored), the moves their clients post, and the
wait of a move's request until the driver has played it."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from tournament.store.base import SOCKET_TIMEOUT_S, StoreBase
from tournament.store.codec import dumps, loads
from tournament.store.keys import MatchPart, applied_key, claim_key, inbox_key, match_key
from tournament.store.matches import match_fields

SIGNAL_TTL_S = 3600  # a step's claim and its "applied" signal


def token_digest(token: str) -> str:
    """What is stored of a seat token: its sha256, compared in constant time."""
    return hashlib.sha256(token.encode()).hexdigest()


def _seat_of(tokens: dict[bytes, bytes], token: str) -> int | None:
    """The seat whose stored token digest matches `token`, compared in constant time (every
    digest is compared, whichever matches)."""
    digest = token_digest(token)
    seat = None
    for key, stored in tokens.items():
        if hmac.compare_digest(stored.decode(), digest):
            seat = int(key)
    return seat


class PullSeats(StoreBase):
    """What the API reads and writes for a pull seat's client."""

    def seat_view(self, match_id: str,
                  token: str | None
                  ) -> tuple[dict[str, Any] | None, int | None, dict[str, Any] | None]:
        """What a pull seat's request needs, in one round trip: the match (or None), the
        seat whose token this is (or None) and the live state."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(match_key(match_id))
            pipe.hgetall(match_key(match_id, MatchPart.TOKENS))
            pipe.get(match_key(match_id, MatchPart.LIVE))
            fields, tokens, live = pipe.execute()
        seat = _seat_of(tokens, token) if token is not None else None
        return match_fields(fields), seat, loads(live)

    def post_move(self, match_id: str, seat: int, step: int, action: dict[str, Any],
                  said: dict[str, Any] | None = None) -> bool:
        """Claim `step` and hand the move to the driver, atomically (a script): True for the
        first move posted for the step, False (and nothing posted) for any later one."""
        claimed = self.scripts.claim_and_push(
            keys=[claim_key(match_id, step), inbox_key(match_id, seat)],
            args=[seat, SIGNAL_TTL_S, dumps({"step": step, "action": action, **(said or {})})])
        return bool(claimed)

    def wait_applied(self, match_id: str, step: int, timeout_s: float) -> bool:
        """Wait until the driver has played `step` (after a pull move was posted), at most
        `timeout_s` (kept under the socket timeout)."""
        timeout_s = min(timeout_s, SOCKET_TIMEOUT_S - 1)
        return self.redis.blpop([applied_key(match_id, step)], timeout=timeout_s) is not None
