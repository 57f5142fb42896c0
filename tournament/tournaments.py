"""Tournaments of every format, played as one rq job per match, followed live.

`create_tournament` stores the tournament, then the matches its format schedules first
(`tournament.formats`: a round-robin's or gauntlet's whole schedule, an SPRT's first pairs,
a Swiss tournament's first round) as ordinary bot matches tagged with the tournament's id
(`tournament.scheduling`), and queues one rq job per match: any number of workers share
the work. Each finished match is
counted once (`tournament.results`); `tournament_view` reads progress, standings, the
cross-table and, once every match is over, the final ratings, and queues again the
matches whose worker died (`tournament.recovery`). `leaderboard` is a game's live Elo with
the interval of each bot's latest tournament. No answer grows with the matches played: a
view lists its first `VIEW_MATCHES` match ids (`match_id_page` pages them all), rating
histories are read a page at a time (`Store.rating_history`).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import engines
from referee.match.replay import utc_now
from referee.match.setups import match_options
from tournament import formats, pairing, ratings, recovery, results, scheduling, skill
from tournament.formats import SetupError
from tournament.store import MatchStatus, Store
from tournament.store.tournaments import TournamentState

__all__ = ["SetupError"]  # raised by create_tournament, caught by the API

CREATE_BATCH = 500  # matches stored and queued per round trip
VIEW_MATCHES = 200  # match ids a tournament's view lists


class RetiredBot(SetupError):
    """An entrant was retired (DELETE /bots/{id}): it enters no new tournament."""


# ----- creation -----------------------------------------------------------------------
Admit = Callable[[list[dict], dict], None]


def create_tournament(store: Store, spec: dict[str, Any], admit: Admit | None = None) -> dict:
    """Store and queue a tournament; `spec` holds game, bots, players, rounds, seed,
    options, policy, deadline_ms, an optional name and `account` (who asked), `format` and
    `deals` (defaults `round_robin` and `paired`) and the format's own fields
    (`tournament.formats`). `admit(bots, meta)` may refuse it (by raising) once its bots are
    read and its size known, before anything is stored. Returns its meta."""
    engine = engines.get(spec["game"])
    formats.check_fields(spec)
    kind = spec.get("format", formats.ROUND_ROBIN)
    bots = registered_bots(store, formats.entrants(spec), engine.name)
    options = checked_options(engine, spec["players"], spec["options"])
    formats.check_size(kind, len(bots), spec["players"])
    tournament_id = f"t-{secrets.token_hex(8)}"
    meta = {
        "id": tournament_id, "name": spec.get("name") or tournament_id, "game": engine.name,
        "game_version": engine.version, "players": spec["players"], "seed": spec["seed"],
        "options": options, "policy": spec["policy"], "deadline_ms": spec["deadline_ms"],
        "time_control": spec.get("time_control"),
        "format": kind, "deals": spec.get("deals", pairing.PAIRED),
        "bots": [{"bot_id": bot["id"], "name": bot["name"], "version": bot.get("version", 1)}
                 for bot in bots],
        **formats.format_fields(spec, len(bots)), "created_at": utc_now(),
        **({"account": spec["account"]} if spec.get("account") else {}),
    }
    if admit is not None:
        admit(bots, meta)
    planned, state = formats.first_plan(meta)
    metas = scheduling.match_metas(meta, planned)
    store.save_tournament(meta, state)
    for first in range(0, len(metas), CREATE_BATCH):
        with store.writes() as pipe:
            scheduling.queue_matches(store, pipe, meta, metas[first:first + CREATE_BATCH])
    return meta


def registered_bots(store: Store, bot_ids: list[str], game: str) -> list[dict]:
    """The entrants, in the order given: registered bots that play `game`."""
    if len(set(bot_ids)) != len(bot_ids):
        raise SetupError("bots", "every bot may enter a tournament only once")
    bots = []
    for bot_id, bot in zip(bot_ids, store.get_bots(bot_ids), strict=True):
        if bot is None:
            raise SetupError("bots", f"no registered bot {bot_id!r}")
        if game not in bot["games"]:
            raise SetupError("bots", f"bot {bot_id} does not play {game}")
        if bot.get("retired_at"):
            raise RetiredBot("bots", f"bot {bot_id} ({bot['name']}) is retired: it enters no "
                                     "new tournament")
        bots.append(bot)
    return bots


def checked_options(engine: engines.Game, players: int, options: dict) -> dict:
    """The options with the game's defaults (one player of Aldabas: its solo mode, see
    `referee.match.setups`); refused when the game cannot be played so."""
    try:
        return match_options(engine, players, options)
    except engines.InvalidSetup as error:
        raise SetupError("options" if options else "players", error.reason,
                         in_spec=True) from None


# ----- reading ------------------------------------------------------------------------
def get_meta(store: Store, tournament_id: str) -> dict | None:
    return store.tournament_meta(tournament_id)


def list_tournaments(store: Store, offset: int, limit: int) -> tuple[list[dict], int]:
    """Newest first: one page of summaries and the total count."""
    ids, total = store.tournament_page(offset, limit)
    return summaries(store, ids), total


def summaries(store: Store, tournament_ids: list[str]) -> list[dict]:
    """Meta, status and progress of each tournament that exists, in one round trip."""
    return [summary(state) for state in store.tournament_states(tournament_ids)]


def summary(state: TournamentState) -> dict:
    """A tournament as listed: `done` and `failed` are the sizes of its counted sets."""
    meta, finished_at, done, failed = state
    return {**meta, "status": "finished" if finished_at else "running",
            "finished_at": finished_at,
            "progress": {"total": meta["total"], "done": done + failed, "failed": failed}}


def tournament_view(store: Store, tournament_id: str, admin: bool = False) -> dict | None:
    """Everything about a tournament; reading it also sweeps it (`sweep`).

    The seed (which fixes every deal) is shown once the tournament is over, or to the
    admin, as a match's seed is.
    """
    if get_meta(store, tournament_id) is None:
        return None
    sweep(store, tournament_id, store.tournament_match_ids(tournament_id))
    meta, match_ids = get_meta(store, tournament_id), store.tournament_match_ids(tournament_id)
    if meta is None:
        return None
    (view,) = summaries(store, [tournament_id])
    statuses = list(store.match_statuses(_pending(store, tournament_id, match_ids)).values())
    view["progress"].update(running=statuses.count(MatchStatus.RUNNING),
                            queued=statuses.count(MatchStatus.QUEUED))
    counted = store.tournament_results(tournament_id)
    names = {bot["bot_id"]: bot["name"] for bot in meta["bots"]}
    view.update(tables(store, meta, counted), matches=match_ids[:VIEW_MATCHES],
                matches_total=len(match_ids),
                seed=meta["seed"] if admin or view["status"] == "finished" else None)
    view.update(formats.format_view(store, meta, counted, match_ids, names))
    return view


def match_id_page(store: Store, tournament_id: str, offset: int,
                  limit: int) -> tuple[list[str], int]:
    """One page of the tournament's match ids in schedule order, and how many it has."""
    return store.tournament_match_page(tournament_id, offset, limit)


def sweep(store: Store, tournament_id: str, match_ids: list[str]) -> None:
    """Queue again the unfinished matches whose worker died, count the ones found over but
    not counted, let the format catch up (a worker may have died before it did), and store
    the final ratings if every match is over."""
    statuses = store.match_statuses(_pending(store, tournament_id, match_ids))
    recovery.requeue_abandoned(store, [match_id for match_id, status in statuses.items()
                                       if status not in (None, MatchStatus.QUEUED)])
    formats.advance(store, tournament_id)
    results.finish_if_complete(store, tournament_id)


def tables(store: Store, meta: dict, counted: list[dict]) -> dict:
    """Standings, cross-table and faults from the counted results; the final ratings (or
    solo ranking) once stored."""
    names = {bot["bot_id"]: bot["name"] for bot in meta["bots"]}
    table = ratings.standings(counted)
    final = store.final_ratings(meta["id"])
    rows = None if final is None else [named(row, names) for row in final]
    solo = meta["players"] == 1
    return {
        "standings": standings_rows(table["table"], names),
        "cross_table": cross_table(table, names),
        "faults": {bot: 0 for bot in names} | {row["bot"]: row["faults"]
                                               for row in table["table"]},
        "ratings": None if solo else rows,
        "solo_ranking": rows if solo else None,
    }


def _pending(store: Store, tournament_id: str, match_ids: list[str]) -> list[str]:
    over = store.counted_match_ids(tournament_id)
    return [match_id for match_id in match_ids if match_id not in over]


def named(row: dict, names: dict[str, str]) -> dict:
    """A row of `tournament.ratings` with `bot` renamed `bot_id` and the bot's name."""
    rest = {key: value for key, value in row.items() if key != "bot"}
    return {"bot_id": row["bot"], "name": names.get(row["bot"], row["bot"]), **rest}


def standings_rows(table: list[dict], names: dict[str, str]) -> list[dict]:
    return [{"rank": place, **named(row, names)} for place, row in enumerate(table, 1)]


def cross_table(table: dict, names: dict[str, str]) -> dict:
    """Bots in standings order; cells[a][b]: a's pair score against b summed over their
    matches (1 ahead, 0.5 tied)."""
    ordered = [row["bot"] for row in table["table"]]
    return {"bots": ordered, "names": {bot: names.get(bot, bot) for bot in ordered},
            "cells": table["cross_table"]}


# ----- leaderboards -------------------------------------------------------------------
def leaderboard_rows(store: Store, game: str, render: Callable[[dict], bytes]) -> list[bytes]:
    """`render` of each row of `leaderboard(...)`, kept in Redis until the ratings change,
    so that a page of the leaderboard costs a read and no JSON work."""
    version, rows = store.kept_leaderboard(game)
    if rows is None:
        rows = [render(row) for row in leaderboard(store, game)]
        store.keep_leaderboard(game, version, rows)
    return rows


def leaderboard(store: Store, game: str) -> list[dict]:
    """A game's bots by live Elo; low/high: the bot's latest tournament's Bradley-Terry
    95% interval, shifted so that it is centred on the live Elo (null without one); mu,
    sigma and ordinal: its Weng-Lin skill over every rated match of the game, and
    `by_players` the same over those of each number of players. Two round trips to Redis,
    whatever the number of bots."""
    data = store.leaderboard_ratings(game)
    elos = data.elos
    order = sorted(elos, key=lambda bot: (-elos[bot], bot))
    bots = dict(zip(order, store.get_bots(order), strict=True))
    return [{**leaderboard_row(bots[bot], bot, elos[bot], data.games.get(bot, 0),
                               data.intervals.get(bot)),
             **_shown_skill(data.skills.get(bot)),
             "by_players": {str(players): _shown_skill(skills[bot])
                            for players, skills in sorted(data.skills_by_players.items())
                            if bot in skills}}
            for bot in order]


def _shown_skill(value: list[float] | None) -> dict[str, float]:
    return (skill.Skill(*value) if value else skill.INITIAL).shown()


def rating_history(store: Store, game: str, bot_id: str, offset: int,
                   limit: int) -> tuple[list[list], int]:
    """One page of the bot's `[n, Elo, version]` points (Elo rounded as in the
    leaderboard; points stored before versions have none)."""
    points, total = store.rating_history(game, bot_id, offset, limit)
    return [[n, round(rating, ratings.DECIMALS), *rest] for n, rating, *rest in points], total


NEW_VERSION_WIDENING = 2.0
"""How much wider a bot's interval is shown once it has a version newer than the one its
interval was measured with (until a tournament measures the new one): it keeps its rating,
with its uncertainty widened."""


def leaderboard_row(bot: dict | None, bot_id: str, elo: float, games: int,
                    interval: dict | None) -> dict:
    low = high = None
    if interval is not None:
        widen = NEW_VERSION_WIDENING if bot and bot.get("version", 1) > interval.get(
            "version", 1) else 1.0
        low = round(elo + (interval["low"] - interval["rating"]) * widen, ratings.DECIMALS)
        high = round(elo + (interval["high"] - interval["rating"]) * widen, ratings.DECIMALS)
    return {"bot_id": bot_id, "name": bot["name"] if bot else bot_id,
            "rating": round(elo, ratings.DECIMALS), "low": low, "high": high, "games": games}
