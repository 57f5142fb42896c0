"""Rate limits counted in Redis, so that every API process shares them: moving windows
(at most N requests in any S seconds, by Redis's clock), so no burst of 2N fits around a
window's edge as it did in fixed windows."""

from __future__ import annotations

import math

from tournament.store.base import StoreBase
from tournament.store.keys import rate_key
from tournament.store.pull import token_digest


class Limits(StoreBase):
    """The rate limits: moves per pull seat token, replays verified and sign-ups per client
    address."""

    def count_move(self, token: str, limit: int, window_s: int) -> int | None:
        """Count one move posted with `token` unless `limit` were counted in the last
        `window_s` seconds; None when counted, else the whole seconds until one of those
        leaves the window (at least 1). Only the token's sha256 is in the key."""
        return self._count(rate_key(token_digest(token)), limit, window_s)

    def count_verification_request(self, address: str, limit: int, window_s: int
                                   ) -> int | None:
        """Count one `POST /replays/verify` from `address`, as `count_move` counts moves."""
        return self._count(rate_key(token_digest(address), "verify"), limit, window_s)

    def count_signup(self, address: str, limit: int, window_s: int) -> int | None:
        """Count one `POST /accounts` from `address` (open sign-up), as `count_move` does."""
        return self._count(rate_key(token_digest(address), "signup"), limit, window_s)

    def _count(self, key: str, limit: int, window_s: int) -> int | None:
        wait_ms = int(self.scripts.count_in_window(keys=[key], args=[limit, window_s * 1000]))
        return None if wait_ms < 0 else max(1, math.ceil(wait_ms / 1000))
