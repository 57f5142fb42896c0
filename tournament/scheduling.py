"""Creating and queueing a tournament's matches: the one way every format schedules them.

The matches of a plan (each `{"index", "seats", "seed"}`, seats as bot ids) become ordinary
bot matches tagged with the tournament's id, their index in it and their deal's siblings
(`tournament.deals`), stored and queued on a caller's pipeline already in MULTI, so the
caller decides what else commits with them (the format's bookkeeping, in one transaction).
"""

from __future__ import annotations

from typing import Any

import redis

import engines
from tournament import deals, wakeups
from tournament.store import MatchMeta, MatchSeat, Store, bot_seats, new_match_meta


def match_metas(tournament: dict[str, Any], planned: list[dict[str, Any]]) -> list[MatchMeta]:
    """The stored form of each planned match, with fresh ids and deal siblings."""
    metas = [new_match_meta(
        tournament["game"], tournament["game_version"],
        _seats(tournament, match["seats"]),
        tournament["options"], match["seed"], tournament["policy"], tournament["deadline_ms"],
        tournament["deadline_ms"], tournament_id=tournament["id"],
        tournament_index=match["index"], **clock_tag(tournament), **account_tag(tournament))
        for match in planned]
    deals.tag_siblings(metas)
    return metas


def _seats(tournament: dict[str, Any], bot_ids: list[str]) -> list[MatchSeat]:
    """A match's seats, each with the version of its bot the tournament was created with."""
    entries = {bot["bot_id"]: bot for bot in tournament["bots"]}
    seats = bot_seats([(bot_id, entries[bot_id]["name"]) for bot_id in bot_ids])
    for seat in seats:
        version = entries[seat["bot_id"] or ""].get("version")
        if version is not None:
            seat["version"] = version
    return seats


def account_tag(spec: dict[str, Any]) -> dict[str, Any]:
    """The `account` tag of a match an account started (directly or by a tournament)."""
    account = spec.get("account")
    return {} if account is None else {"account": account}


def clock_tag(spec: dict[str, Any]) -> dict[str, Any]:
    """The `time_control` tag of a match of a tournament (or match request) on a clock."""
    control = spec.get("time_control")
    return {} if control is None else {"time_control": control}


def queue_matches(store: Store, pipe: redis.client.Pipeline, tournament: dict[str, Any],
                  metas: list[MatchMeta]) -> None:
    """Store `metas` as queued matches, append them to the tournament's match list and
    queue one rq job each, on `pipe` (in MULTI; the caller executes it)."""
    engine = engines.get(tournament["game"], tournament["game_version"])
    for meta in metas:
        state = engine.new_game(num_players=meta["num_players"], seed=meta["seed"],
                                options=tournament["options"])
        store.create_match(meta, state, engine.current_seat(state), {}, pipe)
        wakeups.enqueue_match(store, meta, pipeline=pipe)
    if metas:
        store.append_matches(pipe, tournament["id"], [meta["id"] for meta in metas])
