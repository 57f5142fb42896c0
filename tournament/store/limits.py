"""Rate limits counted in Redis, so that every API process shares them."""

from __future__ import annotations

from tournament.store.base import StoreBase
from tournament.store.keys import rate_key
from tournament.store.pull import token_digest


class Limits(StoreBase):
    """The move rate limit of the pull seats' tokens."""

    def count_move(self, token: str, limit: int, window_s: int, now: float) -> float | None:
        """Count one move posted with `token` in its fixed window of `window_s` seconds;
        None while within `limit`, else the seconds until the window ends. Only the token's
        sha256 is in the key."""
        window = int(now // window_s)
        key = rate_key(token_digest(token), window)
        with self.redis.pipeline() as pipe:
            pipe.incr(key)
            pipe.expire(key, window_s + 1)
            count, _ = pipe.execute()
        return None if count <= limit else (window + 1) * window_s - now
