"""The results log in Redis: the Merkle tree's nodes by level, and the match id of each leaf.

`log:level:0` is the leaf hashes, 32 bytes each: a leaf is appended by the script that
records a match's result (`Progress.finish`), or, for a match recorded before the log
existed, by `append_leaf`. The levels above hold the hash of every complete aligned subtree
(`referee.match.merkle`); they are derived data, filled by whoever reads the tree
(`complete_log`): every writer of a node writes the same bytes, so writers never conflict,
and a writer that died half way is finished by the next reader. Reading a head or a proof
is then O(log n) `GETRANGE`s in one round trip.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from referee.match import merkle
from referee.match.merkle import HASH_BYTES, Node
from tournament.store.base import StoreBase
from tournament.store.codec import binary, dumps, loads, text
from tournament.store.keys import MatchField, log_head_key, log_ids_key, log_level_key, match_key


class ResultsLog(StoreBase):
    """The Merkle tree of every recorded result."""

    def log_size(self) -> int:
        return int(self.redis.strlen(log_level_key(0))) // HASH_BYTES

    def complete_log(self, size: int) -> None:
        """Fill the nodes of every complete subtree of the first `size` leaves that are not
        stored yet (usually none, or one per level just completed)."""
        levels = range(1, max(size, 1).bit_length())
        with self.redis.pipeline(transaction=False) as pipe:
            for level in levels:
                pipe.strlen(log_level_key(level))
            lengths = pipe.execute()
        for level, length in zip(levels, lengths, strict=True):
            have, want = int(length) // HASH_BYTES, size >> level
            if have >= want:
                continue
            children = binary(self.redis.getrange(
                log_level_key(level - 1), 2 * have * HASH_BYTES, 2 * want * HASH_BYTES - 1)) or b""
            parents = b"".join(
                merkle.node_hash(children[at:at + HASH_BYTES],
                                 children[at + HASH_BYTES:at + 2 * HASH_BYTES])
                for at in range(0, len(children), 2 * HASH_BYTES))
            self.redis.setrange(log_level_key(level), have * HASH_BYTES, parents)

    def log_nodes(self, nodes: Iterable[Node]) -> dict[Node, bytes]:
        """The stored hashes of aligned subtrees (complete, and filled: `complete_log`), in
        one round trip."""
        wanted = list(dict.fromkeys(nodes))
        with self.redis.pipeline(transaction=False) as pipe:
            for level, index in wanted:
                pipe.getrange(log_level_key(level), index * HASH_BYTES,
                              (index + 1) * HASH_BYTES - 1)
            answers = pipe.execute()
        found = dict(zip(wanted, answers, strict=True))
        missing = [node for node, value in found.items() if len(value) != HASH_BYTES]
        if missing:
            raise LookupError(f"the results log lacks nodes {missing[:3]}")
        return found

    def log_entries(self, start: int, end: int) -> list[tuple[int, str, bytes]]:
        """(index, match id, leaf hash) of the leaves [start, end) (end within the log)."""
        if end <= start:
            return []
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.lrange(log_ids_key(), start, end - 1)
            pipe.getrange(log_level_key(0), start * HASH_BYTES, end * HASH_BYTES - 1)
            ids, leaves = pipe.execute()
        return [(start + n, text(match_id) or "", leaves[n * HASH_BYTES:(n + 1) * HASH_BYTES])
                for n, match_id in enumerate(ids)]

    def last_head(self) -> dict[str, Any] | None:
        """The last signed tree head kept (`save_head`), or None."""
        return loads(self.redis.get(log_head_key()))

    def save_head(self, head: Mapping[str, Any]) -> None:
        self.redis.set(log_head_key(), dumps(head))

    def append_leaf(self, match_id: str, leaf: bytes) -> int:
        """Log a finished match that has no leaf yet; its index (the one it had, if it had
        one), or -1 when it is not finished."""
        return int(self.scripts.append_leaf(
            keys=[match_key(match_id), log_level_key(0), log_ids_key()], args=[leaf, match_id]))

    def log_indexes(self, match_ids: list[str]) -> list[int | None]:
        """Each match's index in the log (None: not logged), in one round trip."""
        with self.redis.pipeline(transaction=False) as pipe:
            for match_id in match_ids:
                pipe.hget(match_key(match_id), MatchField.LOG)
            answers = pipe.execute()
        return [None if answer is None else int(answer) for answer in answers]
