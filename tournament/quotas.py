"""Account quotas (issue 27): what an account may have at once (bots, live tokens, matches
not over) and do per day (matches started, a tournament's included; tournaments), counted
in Redis so that every API process shares them. Limits are `referee.config.Quotas`; a day
is a fixed window of `Quotas.day_s` seconds (a UTC day by default)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from referee.config import Quotas
from referee.errors import RefereeError
from tournament.bots import is_retired
from tournament.store import Store

DAILY = ("matches_per_day", "tournaments_per_day")
RETRY_HELD_S = {"bots": 60, "tokens": 60, "concurrent_matches": 10}
"""Retry-After of the quotas on what an account holds: freed by retiring a bot, revoking a
token, a match ending (a guess: no clock says when)."""


class QuotaExceeded(RefereeError):
    """A request over one of the account's quotas: its name, limit, and when to retry."""

    def __init__(self, quota: str, limit: int, retry_s: int, detail: str):
        super().__init__(detail)
        self.quota, self.limit, self.retry_s = quota, limit, retry_s


@dataclass(frozen=True)
class Day:
    """The quota day `now` falls in: its label and the seconds until the next one."""

    label: str
    left_s: int

    @classmethod
    def of(cls, now: float, day_s: int) -> Day:
        index = int(now // day_s)
        return cls(f"{day_s}:{index}", max(1, math.ceil((index + 1) * day_s - now)))


def take_daily(store: Store, account_id: str, quota: str, amount: int, quotas: Quotas,
               now: float) -> None:
    """Count `amount` against a daily quota; QuotaExceeded (nothing counted) past it."""
    limit, day = getattr(quotas, quota), Day.of(now, quotas.day_s)
    if store.take_daily(account_id, quota, amount, limit, day.label) is None:
        used = store.used_today(account_id, quota, day.label)
        raise QuotaExceeded(quota, limit, day.left_s,
                            f"{quota}: {limit} a day, {used} used, {amount} more asked; a new "
                            f"day starts in {day.left_s} s")


def check_held(quota: str, held: int, quotas: Quotas) -> None:
    """QuotaExceeded when the account already holds its limit of `quota`."""
    limit = getattr(quotas, quota)
    if held >= limit:
        raise QuotaExceeded(quota, limit, RETRY_HELD_S[quota],
                            f"{quota}: at most {limit} at once, and the account has {held}")


def bots_held(store: Store, account_id: str) -> int:
    """The account's bots not retired."""
    bots = store.get_bots(store.account_bots(account_id))
    return sum(1 for bot in bots if bot is not None and not is_retired(bot))


def usage(store: Store, account_id: str, quotas: Quotas, now: float) -> dict[str, Any]:
    """Every quota of the account: its limit, what is used and what remains."""
    day = Day.of(now, quotas.day_s)
    used = {"bots": bots_held(store, account_id),
            "tokens": len(store.account_tokens(account_id)),
            "concurrent_matches": store.running_account_matches(account_id),
            **{quota: store.used_today(account_id, quota, day.label) for quota in DAILY}}
    return {quota: {"limit": getattr(quotas, quota), "used": count,
                    "remaining": max(getattr(quotas, quota) - count, 0)}
            for quota, count in used.items()}
