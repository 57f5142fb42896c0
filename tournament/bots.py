"""Registered bots: names, secrets and retirement, on top of `tournament.store`.

- A bot's name is unique, compared without case and outer spaces ("MyBot" is "mybot "),
  retired bots included: a name in the history and the ratings names one bot.
- A bot's `secret` (32 random bytes, hex) is kept in its record for the referee to sign its
  requests to the bot; it leaves the server only in the answer that creates it
  (`POST /bots`, `POST /bots/{id}/secret`).
- A retired bot (`retired_at` set) keeps its record, matches, replays and ratings, but no
  new match or tournament accepts it.

`update_bot` writes a changed record in place: `Store.save_bot` would also move the bot to
the end of the registration order. (Both helpers belong in `tournament.store` once its
rewrite lands.)
"""

from __future__ import annotations

import secrets

from tournament.store import Store, bot_key, dumps

SECRET_BYTES = 32


def new_secret() -> str:
    """A bot's signing secret: 32 random bytes as 64 hex digits."""
    return secrets.token_hex(SECRET_BYTES)


def name_key(name: str) -> str:
    return name.strip().casefold()


def bot_named(store: Store, name: str, other_than: str | None = None) -> dict | None:
    """The registered bot (retired ones included) with this name, if any."""
    wanted = name_key(name)
    return next((bot for bot in store.list_bots()
                 if name_key(bot["name"]) == wanted and bot["id"] != other_than), None)


def is_retired(bot: dict) -> bool:
    return bool(bot.get("retired_at"))


def update_bot(store: Store, bot: dict) -> None:
    """Write a registered bot's changed record, keeping its place in the registration order."""
    store.redis.set(bot_key(bot["id"]), dumps(bot), xx=True)


def public_bot(bot: dict) -> dict:
    """The record as the API shows it: never its secret; `retired_at` null until retired."""
    return {**{k: v for k, v in bot.items() if k != "secret"},
            "retired_at": bot.get("retired_at")}
