"""Choosing a ladder's next match (docs/ratings.md, "Matchmaking"): a pure function of the
entries, the ladder's seed and the number of the match, so the same history makes the same
matches.

1. **Who may play**: active entries not in a running match of the ladder and whose bot is
   below its cap of concurrent matches (the ladder never queues a match that would wait).
2. **The anchor**: the entry with the fewest matches of its current version (a new entry
   or version first: its placement), then the fewest matches in all; ties are broken by a
   hash of (seed, match number, bot), so no bot is always first.
3. **Its opponents**, one at a time: among the `WINDOW` entries nearest the anchor in mu
   (of the `4 * WINDOW` nearest) that have played at most `BALANCE_SLACK` (or 10%) more
   matches than it (or, when those cannot fill the match, the `WINDOW` nearest), the one
   that makes the match most informative (openskill's draw probability of the seats
   chosen so far with it), never a bot of an owner already seated.
4. **Seats**: the chosen bots in id order, rotated by the match number.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter

from tournament import skill

WINDOW = 8  # opponents looked at per seat: the nearest in mu
BALANCE_SLACK = 2  # matches an opponent may be ahead of the anchor (or 10% of its count)


@dataclass(frozen=True, slots=True, eq=False)
class Candidate:
    """What matchmaking knows of an entry that may play now."""

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
    if len(candidates) < players:
        return None
    anchor = candidates[_anchor(candidates, seed, number)]
    limit = anchor.version_matches + max(BALANCE_SLACK, anchor.version_matches // 10)
    distance = [abs(entry.mu - anchor.mu) for entry in candidates]
    nearest = heapq.nsmallest(4 * WINDOW, range(len(candidates)), key=distance.__getitem__)
    near = [candidates[i] for i in nearest if candidates[i] is not anchor]
    for pool in ([entry for entry in near if entry.version_matches <= limit], near):
        chosen = _fill(anchor, pool[:WINDOW], players, seed, number)
        if chosen is not None:
            bots = sorted(entry.bot for entry in chosen)
            turn = number % players
            return bots[turn:] + bots[:turn]
    return None


_counts = attrgetter("version_matches", "matches")


def _anchor(candidates: Sequence[Candidate], seed: int, number: int) -> int:
    counts = list(map(_counts, candidates))
    fewest = min(counts)
    if counts.count(fewest) == 1:
        return counts.index(fewest)
    tied = [index for index, count in enumerate(counts) if count == fewest]
    return min(tied, key=lambda index: _tiebreak(seed, number, candidates[index].bot))


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
