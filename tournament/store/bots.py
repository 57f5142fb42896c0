"""Registered bots: their records, the registration order, the lookup by name.

A bot's name is unique, compared without case and outer spaces ("MyBot" is "mybot "),
retired bots included: a name in the history and the ratings names one bot.
"""

from __future__ import annotations

import time

from tournament.store.base import StoreBase
from tournament.store.codec import decoded, dumps, loads
from tournament.store.keys import bot_key, bot_name_key, bot_names_indexed_key, bots_key


def name_key(name: str) -> str:
    """What two names are compared by."""
    return name.strip().casefold()


class Bots(StoreBase):
    """The bots' records, by id and in registration order."""

    def save_bot(self, bot: dict) -> None:
        """Register a bot (last in the registration order), under its name."""
        with self.redis.pipeline() as pipe:
            pipe.set(bot_key(bot["id"]), dumps(bot))
            pipe.zadd(bots_key(), {bot["id"]: time.time()})
            pipe.set(bot_name_key(name_key(bot["name"])), bot["id"])
            pipe.execute()

    def update_bot(self, bot: dict, old_name: str | None = None) -> None:
        """Write a registered bot's changed record, keeping its place in the registration
        order; renamed from `old_name`, that name is freed."""
        with self.redis.pipeline() as pipe:
            pipe.set(bot_key(bot["id"]), dumps(bot), xx=True)
            if old_name is not None and name_key(old_name) != name_key(bot["name"]):
                pipe.delete(bot_name_key(name_key(old_name)))
                pipe.set(bot_name_key(name_key(bot["name"])), bot["id"])
            pipe.execute()

    def get_bot(self, bot_id: str) -> dict | None:
        return loads(self.redis.get(bot_key(bot_id)))

    def get_bots(self, bot_ids: list[str]) -> list[dict | None]:
        """`get_bot` of every id, in one round trip."""
        if not bot_ids:
            return []
        return [loads(raw) for raw in self.redis.mget([bot_key(i) for i in bot_ids])]

    def list_bots(self) -> list[dict]:
        """Every registered bot, by registration time."""
        return self.bot_page(0, -1)[0]

    def bot_page(self, offset: int, limit: int) -> tuple[list[dict], int]:
        """One page of the bots by registration time (`limit` -1: all after `offset`), and
        how many there are."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrange(bots_key(), offset, offset + limit - 1 if limit >= 0 else -1)
            pipe.zcard(bots_key())
            ids, total = pipe.execute()
        return [bot for bot in self.get_bots([i.decode() for i in ids]) if bot], total

    def bot_named(self, name: str, other_than: str | None = None) -> dict | None:
        """The registered bot (retired ones included) with this name, if any (one read,
        however many bots there are)."""
        if not self.redis.exists(bot_names_indexed_key()):
            self._index_bot_names()
        found = self.redis.get(bot_name_key(name_key(name)))
        if found is None or decoded(found) == other_than:
            return None
        return self.get_bot(decoded(found))

    def _index_bot_names(self) -> None:
        """Every bot under its name: the bots registered before the names were indexed
        (the caller holds BOT_NAMES_LOCK, so no name is taken meanwhile)."""
        with self.redis.pipeline() as pipe:
            for bot in self.list_bots():
                pipe.set(bot_name_key(name_key(bot["name"])), bot["id"])
            pipe.set(bot_names_indexed_key(), 1)
            pipe.execute()
