"""A game's ratings in Redis: counting a match once (live Elo, history, the game's and the
tournament's results, the announcements, in one transaction), the leaderboard's data and
its kept page, a bot's rating history."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, NamedTuple

from tournament.store.base import Command, StoreBase
from tournament.store.codec import dumps, loads
from tournament.store.keys import (
    RatingsPart,
    TournamentPart,
    history_key,
    ratings_events_channel,
    ratings_key,
    skill_key,
    tournament_events_channel,
    tournament_key,
)
from tournament.store.steps import Argument

Result = dict[str, Any]
# The live Elo of the bots of a rated result after it, from their Elo before it (a new bot
# is absent).
EloUpdate = Callable[[dict[str, float]], dict[str, float]]
# Their Weng-Lin skills `[mu, sigma]` after it, from those before it (a new bot is absent).
SkillUpdate = Callable[[dict[str, list[float]]], dict[str, list[float]]]


class RatingUpdates(NamedTuple):
    """How a rated result changes the ratings it is counted in."""

    elo: EloUpdate
    skill: SkillUpdate


MAX_PLAYERS = 8  # the most seats a skill by number of players is read for


class LeaderboardData(NamedTuple):
    elos: dict[str, float]
    games: dict[str, int]
    intervals: dict[str, dict]
    skills: dict[str, list[float]]
    skills_by_players: dict[int, dict[str, list[float]]]


class Ratings(StoreBase):
    """Counting, the leaderboard, the history."""

    def is_counted(self, game: str, match_id: str) -> bool:
        return bool(self.redis.sismember(ratings_key(game, RatingsPart.COUNTED), match_id))

    def count_match(self, match: dict, result: Result | None,
                    updates: RatingUpdates | None) -> bool:
        """Count a match once (`result` None: it failed; `updates` None: not rated); True
        if this call counted it. WATCH the game's counted set, then MULTI/EXEC every update:
        a count of another match of the game in between makes EXEC fail and this one start
        over on the new ratings, so Elo updates never interleave."""
        game, match_id = match["game"], match["id"]
        counted_key = ratings_key(game, RatingsPart.COUNTED)
        rated = result is not None and updates is not None
        bots = sorted(set(result["seats"])) if rated and result is not None else []
        players = len(match["seats"])

        skill_keys = (skill_key(game), skill_key(game, players))

        def writes(replies: list[Any]) -> list[Command] | None:
            counted, before, skills = _before(replies, bots, skill_keys)
            if counted:
                return None
            commands: list[Command] = [("SADD", counted_key, match_id)]
            if result is not None and updates is not None:
                commands += _rate(game, result, before, updates.elo, _versions(match))
                commands += [("HSET", key, *_pairs(updates.skill(skill)))
                             for key, skill in skills.items()]
            if match.get("tournament_id"):
                commands += _tally(match["tournament_id"], match_id, result)
            return commands + _announce(match, rated)

        return self.optimistic(counted_key, _reads_before(game, counted_key, match_id, bots,
                                                          skill_keys), writes)

    def leaderboard_ratings(self, game: str) -> LeaderboardData:
        """Every bot's live Elo, rated matches, latest tournament interval and skills
        (over all the game's rated matches, and by number of players), in one round trip."""
        with self.redis.pipeline(transaction=False) as pipe:
            for part in (RatingsPart.ELO, RatingsPart.GAMES, RatingsPart.INTERVALS):
                pipe.hgetall(ratings_key(game, part))
            pipe.hgetall(skill_key(game))
            for players in range(1, MAX_PLAYERS + 1):
                pipe.hgetall(skill_key(game, players))
            elo_raw, games_raw, intervals_raw, skill_raw, *by_players = pipe.execute()
        return LeaderboardData(
            {k.decode(): loads(v) for k, v in elo_raw.items()},
            {k.decode(): int(v) for k, v in games_raw.items()},
            {k.decode(): loads(v) for k, v in intervals_raw.items()},
            {k.decode(): loads(v) for k, v in skill_raw.items()},
            {players: {k.decode(): loads(v) for k, v in raw.items()}
             for players, raw in enumerate(by_players, 1) if raw})

    def kept_leaderboard(self, game: str) -> tuple[str, list[bytes] | None]:
        """(the version of the game's ratings, the leaderboard rows kept for that version
        or None).

        The version changes whenever the rows may: a rated match counted (the results
        list grows, with Elo, games and history, in the same transaction) or a tournament's
        intervals stored; a bot renamed or at a new version drops the rows kept
        (`forget_leaderboards`)."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.llen(ratings_key(game, RatingsPart.RESULTS))
            pipe.hgetall(ratings_key(game, RatingsPart.INTERVALS))
            pipe.get(ratings_key(game, RatingsPart.PAGE))
            counted, intervals, kept = pipe.execute()
        digest = hashlib.sha256(b"\n".join(k + b"=" + v for k, v in sorted(intervals.items()))
                                ).hexdigest()[:16]
        version = f"{counted}/{digest}"
        if kept is None:
            return version, None
        kept_version, *rows = kept.split(b"\n")
        return version, rows if kept_version.decode() == version else None

    def forget_leaderboards(self, games: list[str]) -> None:
        """Drop the leaderboard rows kept for these games (rebuilt at the next read)."""
        if games:
            self.redis.delete(*(ratings_key(game, RatingsPart.PAGE) for game in games))

    def keep_leaderboard(self, game: str, version: str, rows: list[bytes]) -> None:
        """Keep rows (JSON, one line each) built after reading `version` (a count in
        between only makes them look older than they are, so they are rebuilt on the next
        read, never served stale)."""
        self.redis.set(ratings_key(game, RatingsPart.PAGE),
                       b"\n".join([version.encode(), *rows]))

    def rating_history(self, game: str, bot_id: str, offset: int,
                       limit: int) -> tuple[list[list], int]:
        """One page of the bot's `[n, Elo]` points, oldest first, and how many it has."""
        key = history_key(game, bot_id)
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.lrange(key, offset, offset + limit - 1)
            pipe.llen(key)
            points, total = pipe.execute()
        return [loads(point) for point in points], total


def _reads_before(game: str, counted_key: str, match_id: str, bots: list[str],
                  skill_keys: tuple[str, ...]) -> list[Command]:
    """What a count reads first: whether the match is counted, then (rated) each bot's
    live Elo, rated matches and skills under each of `skill_keys`."""
    reads: list[Command] = [("SISMEMBER", counted_key, match_id)]
    if bots:
        reads += [("HMGET", key, *bots) for key in (ratings_key(game, RatingsPart.ELO),
                                                    ratings_key(game, RatingsPart.GAMES),
                                                    *skill_keys)]
    return reads


def _before(replies: list[Any], bots: list[str], skill_keys: tuple[str, ...]
            ) -> tuple[bool, dict[str, tuple[float, int]], dict[str, dict[str, list[float]]]]:
    """The replies of `_reads_before`: (whether the match is counted, each bot's live Elo
    and rated matches so far, its skills under each of `skill_keys`); a bot absent is a
    new one (`_rate` writes Elo and matches together)."""
    counted, *replies = replies
    if not bots:
        return bool(counted), {}, {key: {} for key in skill_keys}
    elos, games, *skills = replies
    before = {bot: (loads(elo), int(played)) for bot, elo, played in zip(bots, elos, games,
                                                                          strict=True)
              if elo is not None and played is not None}
    return bool(counted), before, {
        key: {bot: loads(raw) for bot, raw in zip(bots, values, strict=True) if raw is not None}
        for key, values in zip(skill_keys, skills, strict=True)}


def _pairs(values: dict[str, list[float]]) -> list[Argument]:
    """HSET's field and value arguments for `values`, by field, each value as JSON."""
    return [part for field, value in sorted(values.items()) for part in (field, dumps(value))]


def _versions(match: dict) -> dict[str, int]:
    """The version each bot of the match played (1 for matches made before versions)."""
    return {seat["bot_id"]: seat.get("version", 1) for seat in match["seats"]
            if seat.get("bot_id")}


def _rate(game: str, result: Result, before: dict[str, tuple[float, int]],
          update_elo: EloUpdate, versions: dict[str, int]) -> list[Command]:
    """The new live Elo of every bot of the result, and a point `[n, Elo, version]` of
    each one's history (a new version keeps the bot's Elo)."""
    after = update_elo({bot: elo for bot, (elo, _) in before.items()})
    commands: list[Command] = []
    for bot, rating in sorted(after.items()):
        played = before.get(bot, (0.0, 0))[1] + 1
        commands += [("HSET", ratings_key(game, RatingsPart.ELO), bot, dumps(rating)),
                     ("HSET", ratings_key(game, RatingsPart.GAMES), bot, played),
                     ("RPUSH", history_key(game, bot),
                      dumps([played, rating, versions.get(bot, 1)]))]
    return [*commands, ("RPUSH", ratings_key(game, RatingsPart.RESULTS), dumps(result))]


def _tally(tournament_id: str, match_id: str, result: Result | None) -> list[Command]:
    if result is None:
        return [("SADD", tournament_key(tournament_id, TournamentPart.FAILED), match_id)]
    return [("HSET", tournament_key(tournament_id, TournamentPart.RESULTS), match_id,
             dumps(result)),
            ("SADD", tournament_key(tournament_id, TournamentPart.DONE), match_id)]


def _announce(match: dict, rated: bool) -> list[Command]:
    """Tell the followers of its tournament and of its game's leaderboard (the event
    streams) that the match was counted, in the counting transaction."""
    commands: list[Command] = []
    if match.get("tournament_id"):
        commands.append(("PUBLISH", tournament_events_channel(match["tournament_id"]),
                         match["id"]))
    if rated:
        commands.append(("PUBLISH", ratings_events_channel(match["game"]), match["id"]))
    return commands
