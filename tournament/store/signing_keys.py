"""The public halves of every key records were ever signed with (`GET /keys`)."""

from __future__ import annotations

from typing import Any

from tournament.store.base import StoreBase
from tournament.store.codec import loads, text
from tournament.store.keys import current_signing_key_key, signing_keys_key


class SigningKeys(StoreBase):
    """The published signing keys: key id -> public key (base64url), not_before, not_after
    (null while current)."""

    def publish_key(self, key_id: str, public_key: str, now: str, current: bool) -> str | None:
        """Publish a key the first time it is seen (a new current key retires the one before
        it); the id of the current key."""
        answer = self.scripts.register_key(
            keys=[signing_keys_key(), current_signing_key_key()],
            args=[key_id, public_key, now, "1" if current else "0"])
        return text(answer)

    def published_keys(self) -> list[dict[str, Any]]:
        """Every published key, oldest first."""
        entries = [{"key_id": text(key_id), **loads(entry)}
                   for key_id, entry in self.redis.hgetall(signing_keys_key()).items()]
        for entry in entries:
            entry.setdefault("not_after", None)
        return sorted(entries, key=lambda entry: (entry["not_before"], entry["key_id"]))
