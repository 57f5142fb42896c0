"""Registered bots: secrets and retirement (their records, names and order are the store's:
`tournament.store.bots`).

- A bot's name is unique, compared without case and outer spaces, retired bots included
  (`Store.bot_named`).
- A bot's `secret` (32 random bytes, hex) is kept in its record for the referee to sign its
  requests to the bot; it leaves the server only in the answer that creates it
  (`POST /bots`, `POST /bots/{id}/secret`).
- A retired bot (`retired_at` set) keeps its record, matches, replays and ratings, but no
  new match or tournament accepts it.

A changed record is written in place (`Store.update_bot`): `Store.save_bot` would also move
the bot to the end of the registration order.
"""

from __future__ import annotations

import secrets

SECRET_BYTES = 32


def new_secret() -> str:
    """A bot's signing secret: 32 random bytes as 64 hex digits."""
    return secrets.token_hex(SECRET_BYTES)


def is_retired(bot: dict) -> bool:
    return bool(bot.get("retired_at"))


def public_bot(bot: dict) -> dict:
    """The record as the API shows it: never its secret; `retired_at` null until retired,
    `updates` false unless asked for. A bot registered before accounts and versions is the
    admin's, public, at version 1."""
    return {**{k: v for k, v in bot.items() if k != "secret"},
            "updates": bot.get("updates", False), "retired_at": bot.get("retired_at"),
            "owner": bot.get("owner"), "public": bot.get("public", True),
            "version": bot.get("version", 1), "versions": versions(bot),
            "language": bot.get("language")}


def versions(bot: dict) -> list[dict]:
    """Every version of the bot, oldest first (one for a bot from before versions)."""
    return bot.get("versions") or [{"version": 1, "created_at": bot["created_at"],
                                    "url": bot["url"]}]


def new_version(bot: dict, url: str, now: str) -> dict:
    """The bot at a new version that plays at `url`."""
    number = bot.get("version", 1) + 1
    return {**bot, "url": url, "version": number,
            "versions": [*versions(bot), {"version": number, "created_at": now, "url": url}]}


def version_url(bot: dict, number: int | None) -> str:
    """The URL the bot's version `number` plays at (None, or a bot from before versions:
    the current one)."""
    if number is not None:
        for version in bot.get("versions") or ():
            if version["version"] == number:
                return version["url"]
    return bot["url"]
