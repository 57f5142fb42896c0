"""Counting each match's outcome exactly once: live Elo per game and tournament tallies.

The match job calls `count_finished` right after storing a finished match, and
`count_failed` after a match failed. Either may run again for the same match (a job
replayed after its worker died, the recovery sweep, rq's failure callback), so counting is
one Redis transaction (`Store.count_match`): WATCH the game's counted set, check that the
match is not in it, then MULTI/EXEC adds it together with every update (Elo, games,
history, the tournament's result and progress). When another worker counts a match of the
same game in between, EXEC fails and the transaction is retried on fresh ratings: Elo
updates never interleave.

Rated: a finished match of two or more seats that are all registered bots (tournament or
not); a solo match or one with a pull seat changes no rating. When the last match of a
tournament is counted, its Bradley-Terry ratings (solo: average scores) are stored once.

A ladder's match is then counted into its ladder, once (`tournament.ladders.count`).

Each count is announced in its transaction (PUBLISH): the match id on its tournament's
events channel and, when rated, on its game's ratings channel; storing the final ratings
announces "finished" there (and "intervals" on the ratings channel). The API's event
streams listen on those channels.
"""

from __future__ import annotations

import functools
from typing import Any

from referee.match.replay import Record
from tournament import formats, ladders, ratings, skill
from tournament.store import MatchStatus, Store
from tournament.store.ratings import RatingUpdates
from tournament.store.tournaments import TournamentState

Result = dict[str, Any]


def count_finished(store: Store, match_id: str, record: Record | None = None,
                   match: dict | None = None) -> bool:
    """Count a finished match once; True if this call counted it. `record` and `match`:
    its replay, and the match as `Store.get_match` reads it now, when the caller has them
    (its driver), not to read them back."""
    return _count_stored(store, match_id, MatchStatus.FINISHED, record, match)


def count_failed(store: Store, match_id: str) -> bool:
    """Count a failed match once (in its tournament's progress; no rating changes)."""
    return _count_stored(store, match_id, MatchStatus.FAILED)


def _count_stored(store: Store, match_id: str, status: MatchStatus,
                  record: Record | None = None, match: dict | None = None) -> bool:
    if match is None:
        match = store.get_match(match_id)
    return match is not None and match["status"] == status and count_outcome(store, match,
                                                                               record)


def count_outcome(store: Store, match: dict, record: Record | None = None) -> bool:
    """Count a match that is over, finished or failed, as read; False when it is not over
    (or was counted before: its replay, perhaps archived, is then not read). Every write of
    the count, and of the result stored before it, is on a replica before this returns
    (`Store.durably`). When writes must wait for a replica, the match is read again first,
    from the primary that counts it (a failover may have lost its end), and again when the
    primary changed meanwhile."""
    if not store.waits_for_replicas():
        return _count_over(store, match, record)

    def count() -> bool:
        current = store.get_match(match["id"])
        return current is not None and _count_over(store, current, record)

    return store.durably(count)


def _count_over(store: Store, match: dict, record: Record | None) -> bool:
    if match["status"] not in (MatchStatus.FINISHED, MatchStatus.FAILED):
        return False
    counted = False
    outcome = functools.cache(lambda: match_outcome(store, match, record)
                              if match["status"] == MatchStatus.FINISHED else None)
    # with its record in hand the outcome costs no read: the count's own check is enough
    if record is not None or not store.is_counted(match["game"], match["id"]):
        counted = _count(store, match, outcome())
    finish_tournament_of(store, match)
    if match.get("ladder_id") and not store.is_ladder_counted(match["ladder_id"], match["id"]):
        ladders.count(store, match, outcome())  # the replay read once for both
    return counted


def is_rated(match: dict) -> bool:
    seats = match["seats"]
    return len(seats) >= 2 and all(seat["kind"] == "bot" for seat in seats)


def match_outcome(store: Store, match: dict, record: Record | None = None) -> Result:
    """The finished match in the shape of `tournament.ratings`: bot ids, ranks, scores and
    the faults and forfeit of each seat, from its replay (`record`, or the stored one)."""
    seats = match["seats"]
    if record is None or record["match_id"] != match["id"]:
        record = store.get_replay_steps(match["id"])
    faults = [0] * len(seats)
    for step in record["steps"] if record else []:
        if step["fault"]:
            faults[step["seat"]] += 1
    forfeit = match["forfeit"]
    return {
        "match_id": match["id"],
        "seats": [seat["bot_id"] or f"pull:{seat['seat']}" for seat in seats],
        "ranks": match["result"]["ranks"],
        "scores": match["result"]["scores"],
        "faults": faults,
        "forfeits": [bool(forfeit) and forfeit["seat"] == seat["seat"] for seat in seats],
    }


def _count(store: Store, match: dict, result: Result | None) -> bool:
    """Count a match once (result None: it failed), its live Elo updated when rated."""
    if result is None or not is_rated(match):
        return store.count_match(match, result, None)
    return store.count_match(match, result, RatingUpdates(
        lambda before: ratings.elo_update(before, result),
        lambda before: skill_update(before, result)))


def skill_update(before: dict[str, list[float]], result: Result) -> dict[str, list[float]]:
    """The Weng-Lin skills `[mu, sigma]` of the result's bots after it."""
    after = skill.rate({bot: skill.Skill(*value) for bot, value in before.items()},
                       result["seats"], result["ranks"])
    return {bot: [value.mu, value.sigma] for bot, value in after.items()}


# ----- the end of a tournament --------------------------------------------------------
def finish_tournament_of(store: Store, match: dict) -> None:
    """Let the tournament's format count the match and schedule what is due (SPRT pairs, a
    Swiss round), then store the final ratings if every match is over. A format that
    schedules nothing as matches finish (round-robin, gauntlet) costs one read."""
    tournament_id = match.get("tournament_id")
    if not tournament_id:
        return
    states = store.tournament_states([tournament_id])
    if states and formats.format_of(states[0].meta) in formats.PROGRESSIVE:
        formats.advance(store, tournament_id, match["id"], states[0].meta)
        states = store.tournament_states([tournament_id])  # its total may have changed
    finish_if_complete(store, tournament_id, states)


def finish_if_complete(store: Store, tournament_id: str,
                       states: list[TournamentState] | None = None) -> bool:
    """Once every match is counted, store the final ratings (once); True if this call did.
    `states`: the tournament's, when the caller has just read them."""
    if states is None:
        states = store.tournament_states([tournament_id])
    if not states or states[0].finished_at is not None:
        return False
    meta, _, done, failed = states[0]
    if done + failed < meta["total"]:
        return False
    final = final_ratings(meta, store.tournament_results(tournament_id))
    return store.store_final_ratings(meta, final)


def final_ratings(meta: dict, results: list[Result]) -> list[dict]:
    """Solo: bots by average score with a 95% interval; otherwise Bradley-Terry."""
    if meta["players"] == 1:
        return ratings.solo_ranking(results)
    return ratings.bradley_terry(results)
