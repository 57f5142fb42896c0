"""Choosing a ladder's next match (docs/ratings.md, "Matchmaking"): a pure function of the
entries, the ladder's seed and the number of the match, so the same history makes the same
matches.

1. **Who may play**: active entries not in a running match of the ladder and whose bot is
   below its cap of concurrent matches (the ladder never queues a match that would wait).
2. **The anchor**: the entry with the fewest matches of its current version (a new entry
   or version first: its placement), then the fewest matches in all; among those tied, the
   one a hash of (seed, match number) picks, so no bot is always first.
3. **Its opponents**, one at a time: among the `WINDOW` entries nearest the anchor in mu
   (of the `4 * WINDOW` nearest) that have played at most `BALANCE_SLACK` (or 10%) more
   matches than it (or, when those cannot fill the match, the `WINDOW` nearest), the one
   that makes the match most informative (openskill's draw probability of the seats
   chosen so far with it), never a bot of an owner already seated.
4. **Seats**: the chosen bots in id order, rotated by the match number.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from operator import itemgetter
from typing import NamedTuple

import numpy

from tournament import skill

WINDOW = 8  # opponents looked at per seat: the nearest in mu
BALANCE_SLACK = 2  # matches an opponent may be ahead of the anchor (or 10% of its count)


class Candidate(NamedTuple):
    """What matchmaking knows of an entry that may play now (a tuple: cheap to make ten
    thousand of, its fields read in C by `itemgetter`)."""

    bot: str
    owner: str | None
    mu: float
    sigma: float
    matches: int  # ladder matches in all
    version_matches: int  # ladder matches of its current version


def next_match(candidates: Sequence[Candidate], players: int, seed: int,
               number: int) -> list[str] | None:
    """The bots of match `number`, in seat order; None when no match can be made now.
    `candidates` come in bot id order (ties in mu go to the first)."""
    count = len(candidates)
    if count < players:
        return None
    mus = numpy.fromiter(map(_mu, candidates), float, count)
    played = (numpy.fromiter(map(_version_matches, candidates), numpy.int64, count) << 32) + (
        numpy.fromiter(map(_matches, candidates), numpy.int64, count))
    anchor = candidates[_anchor(played, seed, number)]
    limit = anchor.version_matches + max(BALANCE_SLACK, anchor.version_matches // 10)
    near = [candidates[i] for i in _nearest(numpy.abs(mus - anchor.mu), 4 * WINDOW + 1)
            if candidates[i] is not anchor]
    for pool in ([entry for entry in near if entry.version_matches <= limit], near):
        chosen = _fill(anchor, pool[:WINDOW], players, seed, number)
        if chosen is not None:
            bots = sorted(entry.bot for entry in chosen)
            turn = number % players
            return bots[turn:] + bots[:turn]
    return None


_mu, _matches, _version_matches = itemgetter(2), itemgetter(4), itemgetter(5)


def _anchor(played: numpy.ndarray, seed: int, number: int) -> int:
    """The index of the entry with the fewest matches of its version, then in all (packed
    in `played`); among those tied, the one a hash of (seed, number) picks."""
    tied = numpy.flatnonzero(played == played.min())
    return int(tied[int.from_bytes(_tiebreak(seed, number, ""), "big") % len(tied)])


def _nearest(distance: numpy.ndarray, count: int) -> list[int]:
    """The indices of the `count` smallest distances, nearest first (ties: lowest index)."""
    if len(distance) > count:
        bound = distance[numpy.argpartition(distance, count - 1)[count - 1]]
        inside = numpy.flatnonzero(distance < bound)
        on_bound = numpy.flatnonzero(distance == bound)[:count - len(inside)]
        chosen = numpy.concatenate([inside, on_bound])
    else:
        chosen = numpy.arange(len(distance))
    return sorted(chosen.tolist(), key=lambda index: (distance[index], index))


def _fill(anchor: Candidate, pool: list[Candidate], players: int, seed: int,
          number: int) -> list[Candidate] | None:
    """The anchor and its opponents from `pool`; None when the owners rule leaves too few."""
    chosen = [anchor]
    while len(chosen) < players:
        owners = {entry.owner for entry in chosen if entry.owner is not None}
        seated = {id(entry) for entry in chosen}
        allowed = [entry for entry in pool if id(entry) not in seated
                   and (entry.owner is None or entry.owner not in owners)]
        if not allowed:
            return None
        chosen.append(_most_informative(chosen, allowed, seed, number))
    return chosen


def _most_informative(chosen: list[Candidate], allowed: list[Candidate], seed: int,
                      number: int) -> Candidate:
    seated = [skill.Skill(entry.mu, entry.sigma) for entry in chosen]
    return max(allowed, key=lambda entry: (
        round(skill.match_quality([*seated, skill.Skill(entry.mu, entry.sigma)]), 9),
        -entry.version_matches, _tiebreak(seed, number, entry.bot)))


def _tiebreak(seed: int, number: int, bot: str) -> bytes:
    return hashlib.blake2b(f"{seed}:{number}:{bot}".encode(), digest_size=8).digest()
