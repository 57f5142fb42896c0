"""The results log in Redis: the Merkle tree's nodes by level, and the match id of each leaf.

`log:level:0` is the leaf hashes, 32 bytes each: a leaf is appended by the script that
records a match's result (`Progress.finish`), or, for a match recorded before the log
existed, by `append_leaf`. Every fourth level above (4, 8, 12...) holds the hash of every
complete aligned subtree of that level (`referee.match.merkle`); a node of a level between
is folded from the at most 8 nodes below it that are stored, read in one `GETRANGE`. That
keeps the tree in 34 bytes per leaf rather than 64.

The stored levels are derived data, filled by whoever reads the tree (`complete_log`):
every writer of a node writes the same bytes, so writers never conflict, and a writer that
died half way is finished by the next reader; `log:complete` says up to which size all are
filled, so a reader usually checks it with one `GET`. A head or a proof is then O(log n)
`GETRANGE`s in one round trip.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from referee.match import merkle
from referee.match.merkle import HASH_BYTES, Node
from tournament.store.base import StoreBase
from tournament.store.codec import binary, dumps, loads, text
from tournament.store.keys import (
    MatchField,
    log_complete_key,
    log_head_key,
    log_ids_key,
    log_level_key,
    match_key,
)

STRIDE = 4  # levels 0, 4, 8... are stored


def completes_a_node(size: int) -> bool:
    """Whether the leaf that makes the log `size` long completes a stored node (one of
    level 4 at every 16th leaf): only then has `complete_log` anything new to fill."""
    return size % (1 << STRIDE) == 0


def stored_level(level: int) -> int:
    """The stored level a node of `level` is folded from."""
    return level - level % STRIDE


def fold_up(hashes: bytes, levels: int) -> bytes:
    """The hashes of the level `levels` above a run of aligned node hashes (2**levels of
    them per result), concatenated."""
    for _ in range(levels):
        pairs = range(0, len(hashes), 2 * HASH_BYTES)
        hashes = b"".join(merkle.node_hash(hashes[at:at + HASH_BYTES],
                                           hashes[at + HASH_BYTES:at + 2 * HASH_BYTES])
                          for at in pairs)
    return hashes


class ResultsLog(StoreBase):
    """The Merkle tree of every recorded result."""

    def log_size(self) -> int:
        return int(self.redis.strlen(log_level_key(0))) // HASH_BYTES

    def log_size_and_completeness(self) -> tuple[int, int]:
        """(leaves, the size up to which every stored level is filled), in one round trip."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.strlen(log_level_key(0))
            pipe.get(log_complete_key())
            length, complete = pipe.execute()
        return int(length) // HASH_BYTES, int(complete or 0)

    def complete_log(self, size: int, complete: int | None = None) -> None:
        """Fill the stored nodes of every complete subtree of the first `size` leaves that
        are not stored yet (`complete`: the size known filled, read when not given)."""
        if complete is None:
            complete = int(self.redis.get(log_complete_key()) or 0)
        if complete >= size:
            return
        levels = range(STRIDE, size.bit_length(), STRIDE)
        with self.redis.pipeline(transaction=False) as pipe:
            for level in levels:
                pipe.strlen(log_level_key(level))
            lengths = pipe.execute()
        for level, length in zip(levels, lengths, strict=True):
            have, want = int(length) // HASH_BYTES, size >> level
            if have < want:
                span = 1 << STRIDE
                below = binary(self.redis.getrange(
                    log_level_key(level - STRIDE), have * span * HASH_BYTES,
                    want * span * HASH_BYTES - 1)) or b""
                self.redis.setrange(log_level_key(level), have * HASH_BYTES,
                                    fold_up(below, STRIDE))
        self.redis.set(log_complete_key(), size)

    def log_nodes(self, nodes: Iterable[Node]) -> dict[Node, bytes]:
        """The hashes of complete aligned subtrees (their stored levels filled:
        `complete_log`), in one round trip."""
        wanted = list(dict.fromkeys(nodes))
        with self.redis.pipeline(transaction=False) as pipe:
            for level, index in wanted:
                span = 1 << (level - stored_level(level))
                pipe.getrange(log_level_key(stored_level(level)), index * span * HASH_BYTES,
                              (index + 1) * span * HASH_BYTES - 1)
            answers = pipe.execute()
        found = {}
        for (level, index), below in zip(wanted, answers, strict=True):
            span = 1 << (level - stored_level(level))
            if len(below) != span * HASH_BYTES:
                raise LookupError(f"the results log lacks node {(level, index)}")
            found[(level, index)] = fold_up(below, level - stored_level(level))
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
