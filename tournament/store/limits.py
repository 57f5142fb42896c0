"""Rate limits counted in Redis, so that every API process shares them."""

from __future__ import annotations

from tournament.store.base import StoreBase
from tournament.store.keys import rate_key
from tournament.store.pull import token_digest


class Limits(StoreBase):
    """The rate limits: moves per pull seat token, replays verified per client address."""

    def count_move(self, token: str, limit: int, window_s: int, now: float) -> float | None:
        """Count one move posted with `token` in its fixed window of `window_s` seconds;
        None while within `limit`, else the seconds until the window ends. Only the token's
        sha256 is in the key."""
        return self._count(rate_key(token_digest(token), int(now // window_s)), limit,
                           window_s, now)

    def count_verification_request(self, address: str, limit: int, window_s: int,
                                   now: float) -> float | None:
        """Count one `POST /replays/verify` from `address`, as `count_move` counts moves."""
        return self._count(rate_key(token_digest(address), int(now // window_s), "verify"),
                           limit, window_s, now)

    def count_signup(self, address: str, limit: int, window_s: int,
                     now: float) -> float | None:
        """Count one `POST /accounts` from `address` (open sign-up), as `count_move` does."""
        return self._count(rate_key(token_digest(address), int(now // window_s), "signup"),
                           limit, window_s, now)

    def _count(self, key: str, limit: int, window_s: int, now: float) -> float | None:
        window = int(now // window_s)
        with self.redis.pipeline() as pipe:
            pipe.incr(key)
            pipe.expire(key, window_s + 1)
            count, _ = pipe.execute()
        return None if count <= limit else (window + 1) * window_s - now
