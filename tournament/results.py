"""Counting each match's outcome exactly once: live Elo per game and tournament tallies.

The match job calls `count_finished` right after storing a finished match, and
`count_failed` after a match failed. Either may run again for the same match (a job
replayed after its worker died, the recovery sweep, rq's failure callback), so counting is
one Redis transaction: WATCH the game's `counted` set, check that the match is not in it,
then MULTI/EXEC adds it together with every update (Elo, games, history, the tournament's
result and progress). When another worker counts a match of the same game in between, EXEC
fails and the transaction is retried on fresh ratings: Elo updates never interleave.

Rated: a finished match of two or more seats that are all registered bots (tournament or
not); a solo match or one with a pull seat changes no rating. When the last match of a
tournament is counted, its Bradley-Terry ratings (solo: average scores) are stored once.

Each count is announced in its transaction (PUBLISH): the match id on its tournament's
events channel and, when rated, on its game's ratings channel; storing the final ratings
announces "finished" there (and "intervals" on the ratings channel). The API's event
streams listen on those channels.
"""

from __future__ import annotations

from typing import Any

import redis

from referee.match.replay import utc_now
from tournament import formats, ratings
from tournament.store import (
    MatchStatus,
    Store,
    dumps,
    history_key,
    loads,
    ratings_events_channel,
    ratings_key,
    tournament_events_channel,
    tournament_key,
)

Result = dict[str, Any]
FINISHED = "finished"  # on a tournament's events channel: its final ratings are stored
INTERVALS = "intervals"  # on a game's ratings channel: a tournament's intervals are stored


def count_finished(store: Store, match_id: str) -> bool:
    """Count a finished match once; True if this call counted it."""
    return _count_stored(store, match_id, MatchStatus.FINISHED)


def count_failed(store: Store, match_id: str) -> bool:
    """Count a failed match once (in its tournament's progress; no rating changes)."""
    return _count_stored(store, match_id, MatchStatus.FAILED)


def _count_stored(store: Store, match_id: str, status: MatchStatus) -> bool:
    match = store.get_match(match_id)
    return match is not None and match["status"] == status and count_outcome(store, match)


def count_outcome(store: Store, match: dict) -> bool:
    """Count a match that is over, finished or failed, as read; False when it is not over
    (or was counted before: its replay, perhaps archived, is then not read)."""
    if match["status"] not in (MatchStatus.FINISHED, MatchStatus.FAILED):
        return False
    counted = False
    if not store.redis.sismember(ratings_key(match["game"], "counted"), match["id"]):
        finished = match["status"] == MatchStatus.FINISHED
        counted = _count(store, match, match_outcome(store, match) if finished else None)
    finish_tournament_of(store, match)
    return counted


def is_rated(match: dict) -> bool:
    seats = match["seats"]
    return len(seats) >= 2 and all(seat["kind"] == "bot" for seat in seats)


def match_outcome(store: Store, match: dict) -> Result:
    """The finished match in the shape of `tournament.ratings`: bot ids, ranks, scores and
    the faults and forfeit of each seat, from the stored replay."""
    seats = match["seats"]
    record = store.get_replay_steps(match["id"]) or {"steps": []}
    faults = [0] * len(seats)
    for step in record["steps"]:
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
    """The one transaction that counts a match (result None: it failed)."""
    game, match_id = match["game"], match["id"]
    counted_key = ratings_key(game, "counted")
    rated = result is not None and is_rated(match)
    bots = sorted(set(result["seats"])) if rated else []

    def apply(pipe: redis.client.Pipeline) -> bool:
        if pipe.sismember(counted_key, match_id):
            return False
        before = _ratings_before(pipe, game, bots)
        pipe.multi()
        pipe.sadd(counted_key, match_id)
        if rated:
            _rate(pipe, game, result, before)
        if match.get("tournament_id"):
            _tally(pipe, match["tournament_id"], match_id, result)
        _announce(pipe, match, rated)
        return True

    return store.redis.transaction(apply, counted_key, value_from_callable=True)


def _ratings_before(pipe: redis.client.Pipeline, game: str,
                    bots: list[str]) -> dict[str, tuple[float, int]]:
    """Each bot's live Elo and rated matches so far (absent: a new bot)."""
    if not bots:
        return {}
    elos = pipe.hmget(ratings_key(game, "elo"), bots)
    games = pipe.hmget(ratings_key(game, "games"), bots)
    return {bot: (loads(elo), int(played)) for bot, elo, played in zip(bots, elos, games,
                                                                        strict=True)
            if elo is not None}


def _rate(pipe: redis.client.Pipeline, game: str, result: Result,
          before: dict[str, tuple[float, int]]) -> None:
    after = ratings.elo_update({bot: elo for bot, (elo, _) in before.items()}, result)
    for bot, rating in sorted(after.items()):
        played = before.get(bot, (0.0, 0))[1] + 1
        pipe.hset(ratings_key(game, "elo"), bot, dumps(rating))
        pipe.hset(ratings_key(game, "games"), bot, played)
        pipe.rpush(history_key(game, bot), dumps([played, rating]))
    pipe.rpush(ratings_key(game, "results"), dumps(result))


def _tally(pipe: redis.client.Pipeline, tournament_id: str, match_id: str,
           result: Result | None) -> None:
    if result is None:
        pipe.sadd(tournament_key(tournament_id, "failed"), match_id)
        return
    pipe.hset(tournament_key(tournament_id, "results"), match_id, dumps(result))
    pipe.sadd(tournament_key(tournament_id, "done"), match_id)


def _announce(pipe: redis.client.Pipeline, match: dict, rated: bool) -> None:
    """Tell the followers of its tournament and of its game's leaderboard (the event
    streams) that the match was counted, in the counting transaction."""
    if match.get("tournament_id"):
        pipe.publish(tournament_events_channel(match["tournament_id"]), match["id"])
    if rated:
        pipe.publish(ratings_events_channel(match["game"]), match["id"])


# ----- the end of a tournament --------------------------------------------------------
def finish_tournament_of(store: Store, match: dict) -> None:
    """Let the tournament's format count the match and schedule what is due (SPRT pairs, a
    Swiss round), then store the final ratings if every match is over."""
    if match.get("tournament_id"):
        formats.advance(store, match["tournament_id"], match["id"])
        finish_if_complete(store, match["tournament_id"])


def tournament_results(store: Store, tournament_id: str) -> list[Result]:
    """The counted results, in schedule order (their order changes no number anyway)."""
    with store.redis.pipeline(transaction=False) as pipe:
        pipe.hvals(tournament_key(tournament_id, "results"))
        pipe.lrange(tournament_key(tournament_id, "matches"), 0, -1)
        raw, match_ids = pipe.execute()
    order = {match_id.decode(): index for index, match_id in enumerate(match_ids)}
    return sorted(map(loads, raw), key=lambda result: order[result["match_id"]])


def finish_if_complete(store: Store, tournament_id: str) -> bool:
    """Once every match is counted, store the final ratings (once); True if this call did."""
    with store.redis.pipeline(transaction=False) as pipe:
        pipe.hmget(tournament_key(tournament_id), "meta", "finished_at")
        pipe.scard(tournament_key(tournament_id, "done"))
        pipe.scard(tournament_key(tournament_id, "failed"))
        (raw_meta, finished_at), done, failed = pipe.execute()
    if raw_meta is None or finished_at is not None:
        return False
    meta = loads(raw_meta)
    if done + failed < meta["total"]:
        return False
    final = final_ratings(meta, tournament_results(store, tournament_id))
    return _store_final(store, meta, final)


def final_ratings(meta: dict, results: list[Result]) -> list[dict]:
    """Solo: bots by average score with a 95% interval; otherwise Bradley-Terry."""
    if meta["players"] == 1:
        return ratings.solo_ranking(results)
    return ratings.bradley_terry(results)


def _store_final(store: Store, meta: dict, final: list[dict]) -> bool:
    key = tournament_key(meta["id"])

    def apply(pipe: redis.client.Pipeline) -> bool:
        if pipe.hexists(key, "finished_at"):
            return False
        pipe.multi()
        pipe.hset(key, mapping={"finished_at": utc_now(), "ratings": dumps(final)})
        if meta["players"] > 1:
            for row in final:
                pipe.hset(ratings_key(meta["game"], "intervals"), row["bot"],
                          dumps({**row, "tournament_id": meta["id"]}))
            pipe.publish(ratings_events_channel(meta["game"]), INTERVALS)
        pipe.publish(tournament_events_channel(meta["id"]), FINISHED)
        return True

    return store.redis.transaction(apply, key, value_from_callable=True)
