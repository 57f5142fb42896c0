"""Accounts (issue 27): their records, their tokens (only digests are stored), sign-up
invites, what they used of their quotas, and which bots and matches are theirs."""

from __future__ import annotations

import time
from typing import Any

from tournament.store.codec import decoded, dumps, loads
from tournament.store.keys import (
    account_key,
    account_name_key,
    account_quota_key,
    accounts_key,
    invite_key,
    token_key,
)
from tournament.store.matches import Matches, MatchStatus
from tournament.store.pull import token_digest

OVER = (MatchStatus.FINISHED.value, MatchStatus.FAILED.value)


class Accounts(Matches):
    """Accounts, their tokens and their quota counters (a match's status is a `Matches`
    question)."""

    # ----- accounts ---------------------------------------------------------------------
    def create_account(self, account: dict[str, Any]) -> bool:
        """Save a new account; False (nothing saved) when its name is taken (any case)."""
        if not self.redis.set(account_name_key(account["name"]), account["id"], nx=True):
            return False
        with self.redis.pipeline() as pipe:
            pipe.set(account_key(account["id"]), dumps(account))
            pipe.zadd(accounts_key(), {account["id"]: time.time()})
            pipe.execute()
        return True

    def get_account(self, account_id: str) -> dict[str, Any] | None:
        return loads(self.redis.get(account_key(account_id)))

    def suspended_accounts(self, account_ids: list[str]) -> set[str]:
        """Those of `account_ids` suspended (or gone), in one round trip."""
        if not account_ids:
            return set()
        found = self.redis.mget([account_key(i) for i in account_ids])
        return {account_id for account_id, raw in zip(account_ids, found, strict=True)
                if raw is None or loads(raw).get("suspended")}

    def update_account(self, account: dict[str, Any]) -> None:
        self.redis.set(account_key(account["id"]), dumps(account), xx=True)

    def account_page(self, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        """A page of the accounts, oldest first, and how many there are."""
        with self.redis.pipeline() as pipe:
            pipe.zrange(accounts_key(), offset, offset + limit - 1)
            pipe.zcard(accounts_key())
            ids, total = pipe.execute()
        found = self.redis.mget([account_key(decoded(i)) for i in ids]) if ids else []
        return [account for account in map(loads, found) if account], total

    def delete_account(self, account_id: str) -> None:
        """The account, its name and every token gone at once (its bots are the caller's
        to retire: `account_bots`)."""
        account = self.get_account(account_id)
        digests = self.redis.hvals(account_key(account_id, "tokens"))
        with self.redis.pipeline() as pipe:
            for digest in digests:
                pipe.delete(token_key(decoded(digest)))
            pipe.delete(account_key(account_id), account_key(account_id, "tokens"),
                        account_key(account_id, "matches"))
            pipe.zrem(accounts_key(), account_id)
            if account:
                pipe.delete(account_name_key(account["name"]))
            pipe.execute()

    # ----- tokens -----------------------------------------------------------------------
    def save_token(self, token: str, record: dict[str, Any], ttl_s: int | None) -> None:
        """Keep an account token's record under its digest (expiring with it)."""
        digest = token_digest(token)
        with self.redis.pipeline() as pipe:
            pipe.set(token_key(digest), dumps(record), ex=ttl_s)
            pipe.hset(account_key(record["account"], "tokens"), record["id"], digest)
            pipe.execute()

    def token_holder(self, token: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """(the token's record, its account) for a live token of an existing account;
        None for anything else. The lookup is by digest: no token is ever compared."""
        record = loads(self.redis.get(token_key(token_digest(token))))
        if record is None:
            return None
        account = self.get_account(record["account"])
        return None if account is None else (record, account)

    def account_tokens(self, account_id: str) -> list[dict[str, Any]]:
        """The records of the account's live tokens, oldest first (expired ones forgotten)."""
        ids_digests = self.redis.hgetall(account_key(account_id, "tokens"))
        if not ids_digests:
            return []
        ids = [decoded(i) for i in ids_digests]
        records = self.redis.mget([token_key(decoded(d)) for d in ids_digests.values()])
        gone = [token_id for token_id, record in zip(ids, records, strict=True) if not record]
        if gone:
            self.redis.hdel(account_key(account_id, "tokens"), *gone)
        live = [loads(record) for record in records if record]
        return sorted(live, key=lambda record: (record["created_at"], record["id"]))

    def revoke_token(self, account_id: str, token_id: str) -> dict[str, Any] | None:
        """Forget one of the account's tokens at once; its record, or None when the
        account has no live token of that id."""
        digest = self.redis.hget(account_key(account_id, "tokens"), token_id)
        if digest is None:
            return None
        with self.redis.pipeline() as pipe:
            pipe.get(token_key(decoded(digest)))
            pipe.delete(token_key(decoded(digest)))
            pipe.hdel(account_key(account_id, "tokens"), token_id)
            record, _, _ = pipe.execute()
        return loads(record)

    # ----- invites ----------------------------------------------------------------------
    def save_invite(self, code: str, ttl_s: int) -> None:
        self.redis.set(invite_key(token_digest(code)), "1", ex=ttl_s)

    def use_invite(self, code: str) -> int | None:
        """Spend a one-time sign-up code: the milliseconds it had left (for `give_back_invite`),
        or None when it is unknown, used or expired."""
        with self.redis.pipeline() as pipe:  # MULTI: read its life and spend it at once
            pipe.pttl(invite_key(token_digest(code)))
            pipe.delete(invite_key(token_digest(code)))
            left_ms, deleted = pipe.execute()
        return max(left_ms, 1) if deleted else None

    def give_back_invite(self, code: str, left_ms: int) -> None:
        """Make a spent code usable again for what it had left (a sign-up that failed)."""
        self.redis.set(invite_key(token_digest(code)), "1", px=left_ms, nx=True)

    # ----- quotas -----------------------------------------------------------------------
    def take_daily(self, account_id: str, quota: str, amount: int, limit: int,
                   day: str) -> int | None:
        """Count `amount` more of a daily quota; what is left after it, or None (nothing
        counted) when it would go over `limit`."""
        key = account_quota_key(account_id, quota, day)
        with self.redis.pipeline() as pipe:
            pipe.incrby(key, amount)
            pipe.expire(key, 2 * 86400)
            used, _ = pipe.execute()
        if used > limit:
            self.redis.decrby(key, amount)
            return None
        return limit - used

    def used_today(self, account_id: str, quota: str, day: str) -> int:
        return int(self.redis.get(account_quota_key(account_id, quota, day)) or 0)

    def add_account_match(self, account_id: str, match_ids: list[str]) -> None:
        if match_ids:
            self.redis.sadd(account_key(account_id, "matches"), *match_ids)

    def running_account_matches(self, account_id: str) -> int:
        """How many of the account's matches are not over (those over are forgotten)."""
        ids = [decoded(i) for i in self.redis.smembers(account_key(account_id, "matches"))]
        if not ids:
            return 0
        over = [match_id for match_id, status in self.match_statuses(ids).items()
                if status is None or status in OVER]
        if over:
            self.redis.srem(account_key(account_id, "matches"), *over)
        return len(ids) - len(over)

    def add_account_bot(self, account_id: str, bot_id: str) -> None:
        self.redis.sadd(account_key(account_id, "bots"), bot_id)

    def account_bots(self, account_id: str) -> list[str]:
        return sorted(decoded(i) for i in self.redis.smembers(account_key(account_id, "bots")))
