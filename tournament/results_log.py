"""The results log (issue 25): one append-only Merkle tree of every recorded result, as
Certificate Transparency keeps certificates (RFC 6962).

Each finished match is a leaf, in the order results are recorded: its data is the sha256
of the record's canonical bytes (signature included, `log` excluded), hashed as RFC 6962
section 2.1 says (`referee.match.merkle`). The script that records a result appends its
leaf in the same step (`Progress.finish`), so a result is never recorded unlogged, nor
logged twice, whatever dies when. Anyone who keeps a signed tree head can later ask for a
consistency proof and find out whether history was rewritten (`referee log monitor`).

This module answers the API's questions with the store's nodes: the signed head, an
inclusion proof, a consistency proof, and the entries; `backfill` logs the matches recorded
before the log existed, and `publish_keys` the public halves of a process's keys.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import cast

from referee.errors import RefereeError
from referee.match import compact, merkle, replay
from referee.match.replay import LogProofRecord, Record, TreeHead
from referee.match.sealing import Sealer, b64url
from tournament.store import MatchStatus, Store

log = logging.getLogger(__name__)

MAX_ENTRIES = 1000  # per GET /log/entries
BACKFILL_BATCH = 500


class LogRangeError(RefereeError, ValueError):
    """A tree size or a range the log cannot answer for; the message says why."""


@dataclass(frozen=True)
class LogEntry:
    index: int
    match_id: str
    leaf_hash: str


def current_size(store: Store) -> int:
    """The log's size, every node of it stored."""
    size, complete = store.log_size_and_completeness()
    store.complete_log(size, complete)
    return size


def signed_head(store: Store, sealer: Sealer) -> TreeHead:
    """The head of the whole tree: the last one signed while the tree and the key are the
    same, else one signed now (and kept) once a replica holds every leaf it covers
    (`Store.durably`: a head signed over leaves a failover then loses would be a fork)."""
    size = current_size(store)
    last = store.last_head()
    if last is not None and last["tree_size"] == size and last["key_id"] == sealer.key_id:
        return cast(TreeHead, last)
    return store.durably(lambda: _sign_head(store, sealer))


def _sign_head(store: Store, sealer: Sealer) -> TreeHead:
    size = current_size(store)
    nodes = _nodes(store, merkle.range_nodes(0, size), size)
    head: TreeHead = {"tree_size": size,
                      "root_hash": merkle.range_hash((0, size), nodes).hex(),
                      "timestamp": int(time.time() * 1000), "key_id": sealer.key_id,
                      "signature": None}
    head["signature"] = sealer.sign(replay.head_bytes(head))
    store.save_head(head)
    return head


def inclusion_proof(store: Store, index: int, size: int | None = None) -> LogProofRecord:
    """PATH(index, D[size]) with the leaf's hash (RFC 6962 2.1.1); `size` defaults to the
    log's."""
    size = _checked_size(store, size, at_least=index + 1)
    ranges = merkle.inclusion_ranges(index, size)
    nodes = _nodes(store, [(0, index), *merkle.nodes_of(ranges)], size)
    return {"index": index, "tree_size": size, "leaf_hash": nodes[(0, index)].hex(),
            "audit_path": [merkle.range_hash(span, nodes).hex() for span in ranges]}


def consistency_proof(store: Store, first: int, second: int) -> list[str]:
    """PROOF(first, D[second]) (RFC 6962 2.1.2)."""
    if first > second:
        raise LogRangeError(f"first ({first}) is after second ({second})")
    _checked_size(store, second)
    ranges = merkle.consistency_ranges(first, second)
    nodes = _nodes(store, merkle.nodes_of(ranges), second)
    return [merkle.range_hash(span, nodes).hex() for span in ranges]


def _nodes(store: Store, nodes: list[merkle.Node], size: int) -> dict[merkle.Node, bytes]:
    """The nodes, stored levels filled again first when some are missing (levels deleted
    or lost behind `log:complete`)."""
    try:
        return store.log_nodes(nodes)
    except LookupError:
        log.warning("the results log lacked stored nodes below %d leaves: filled again", size)
        store.complete_log(store.log_size(), complete=0)
        return store.log_nodes(nodes)


def entries(store: Store, start: int, end: int) -> list[LogEntry]:
    """The leaves [start, end) (start < end): at most MAX_ENTRIES, cut at the log's end."""
    if end - start > MAX_ENTRIES:
        raise LogRangeError(f"at most {MAX_ENTRIES} entries at once (asked {end - start})")
    end = min(end, store.log_size())
    return [LogEntry(index, match_id, leaf.hex())
            for index, match_id, leaf in store.log_entries(start, end)]


def _checked_size(store: Store, size: int | None, at_least: int = 0) -> int:
    """`size` (default: the log's), once it is known the log has that many leaves and at
    least `at_least`, every node stored."""
    current = current_size(store)
    size = current if size is None else size
    if size > current:
        raise LogRangeError(f"tree_size {size} is beyond the log's {current} leaves")
    if size < at_least:
        raise LogRangeError(f"tree_size {size} does not hold leaf {at_least - 1}")
    return size


def logged(record: Record, index: int | None) -> Record:
    """The record with `log.index` (as served), or as it is when not logged."""
    return record if index is None else {**record, "log": {"index": index}}


def publish_keys(store: Store, sealer: Sealer) -> None:
    """Publish the public half of every key of `sealer` (`GET /keys`); warn when this
    process's current key has been retired by a rotation it has not seen."""
    now = replay.utc_now()
    current_id = None
    for number, key in enumerate(sealer.keys, 1):
        current_id = store.publish_key(key.key_id, b64url(key.public_raw), now,
                                       current=number == len(sealer.keys))
    if sealer.current is not None and current_id != sealer.current.key_id:
        log.warning("this process signs with key %s, but key %s is current since a "
                    "rotation: restart it (or send SIGHUP) with the new key file",
                    sealer.current.key_id, current_id)


def backfill(store: Store) -> int:
    """Log every finished match that has no leaf (recorded before the log existed), in
    the order they finished; how many were logged."""
    unlogged: list[tuple[str, str]] = []
    offset = 0
    while ids := store.list_match_ids(offset, BACKFILL_BATCH)[0]:
        offset += len(ids)
        for match_id, match, index in zip(ids, store.get_matches(ids),
                                          store.log_indexes(ids), strict=True):
            if match and match["status"] == MatchStatus.FINISHED and index is None:
                unlogged.append((match["finished_at"] or "", match_id))
    count = 0
    for _, match_id in sorted(unlogged):
        try:
            record = store.get_replay(match_id)
        except (compact.StoredReplayError, OSError) as error:
            log.error("cannot log match %s: its replay cannot be read (%s)", match_id, error)
            continue
        if record is not None and store.append_leaf(
                match_id, merkle.leaf_hash(replay.leaf_data(record))) >= 0:
            count += 1
    return count
