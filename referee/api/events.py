"""Live event streams (Server-Sent Events, `referee.api.live`):

- GET /matches/{id}/events: `start`, then each `step` (id = its number) as the caller may
  see it, then `result`. No token: the spectator's view; a seat token: that seat's; the
  admin token: every step whole (`seat` picks the view). The same rules as the replay
  endpoints (`referee.match.step_views`), and while another match on its deal is being played
  the match is the admin's only (its public state would tell that match's hidden cards).
- GET /tournaments/{id}/events: `standings`, then `match` and `standings` for every match
  counted, then `finished`.
- GET /ratings/{game}/events: `leaderboard` (the body of GET /ratings/{game}?limit=200),
  then again whenever it changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import orjson
from flask import Blueprint, Response, current_app, request
from marshmallow import Schema

import engines
from referee.api import live
from referee.api.auth import asked_by_admin, bearer_token, require_admin
from referee.api.problems import Problem, invalid, not_found
from referee.api.ratings import leaderboard_page
from referee.api.schemas import (
    LAST_EVENT_ID_DIGITS,
    MAX_PAGE,
    MatchCountedEventSchema,
    MatchEventsQuerySchema,
    RatingsSchema,
    ResultEventSchema,
    StandingsEventSchema,
    StartEventSchema,
    StepEventSchema,
)
from referee.api.web import load_query, services, shared
from referee.match.step_views import Viewer
from tournament import tournaments
from tournament.deals import deal_in_play, deal_is_secret
from tournament.results import FINISHED
from tournament.store import (
    MatchStatus,
    Store,
    ratings_events_channel,
    tournament_events_channel,
    tournament_key,
)

bp = Blueprint("events", __name__)
# Watchers (every stream but a seat's own) get at most 10 writes a second: a fast match's
# steps come a few at a time, and 200 watchers cost the same at any pace. A seat's client
# hears its turn at once.
WATCHER_INTERVAL_S = 0.25

EVENT_SCHEMAS: dict[str, type[Schema]] = {
    "start": StartEventSchema, "step": StepEventSchema, "result": ResultEventSchema,
    "match": MatchCountedEventSchema, "standings": StandingsEventSchema,
    "finished": StandingsEventSchema, "leaderboard": RatingsSchema,
}


@bp.get("/matches/<match_id>/events")
def match_events(match_id: str) -> Response:
    query = load_query(MatchEventsQuerySchema)
    after = _last_event_id(query)
    store = _live().store
    match, token_seat, _ = store.seat_view(match_id, bearer_token())
    if match is None:
        raise not_found(f"match {match_id!r}")
    if after is not None and not _over(match) and after >= match["step"]:
        raise Problem(409, "events/step-not-recorded", "Step not recorded yet",
                      f"step {after} is not recorded yet (the match has {match['step']} "
                      "steps): resume after the id of an event received")
    viewer = _viewer(store, match, query.get("seat"), token_seat)
    seat_client = token_seat is not None and not viewer.whole
    return _stream(live.match_stream(_live(), match, viewer, after, shape,
                                     0.0 if seat_client else WATCHER_INTERVAL_S))


@bp.get("/tournaments/<tournament_id>/events")
def tournament_events(tournament_id: str) -> Response:
    store = _live().store
    if tournaments.get_meta(store, tournament_id) is None:
        raise not_found(f"tournament {tournament_id!r}")
    announcer = TournamentAnnouncer(store, _live().memo, tournament_id, asked_by_admin())
    return _stream(live.announcements(_live(), tournament_events_channel(tournament_id),
                                      announcer))


@bp.get("/ratings/<game>/events")
def ratings_events(game: str) -> Response:
    if game not in engines.names():
        raise not_found(f"game {game!r}")
    announcer = LeaderboardAnnouncer(_live().store, _live().memo, game)
    return _stream(live.announcements(_live(), ratings_events_channel(game), announcer))


def shape(event: str, data: dict) -> bytes:
    """An event's data dumped through its schema, as JSON."""
    return orjson.dumps(shared(EVENT_SCHEMAS[event]).dump(data))


def _stream(chunks: Iterator[bytes]) -> Response:
    live.limit_writes(request.environ.get("gunicorn.socket"))
    return Response(chunks, mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def _live() -> live.Live:
    """This process's live machinery (its Redis connections, one of them pub/sub), made
    on first use."""
    extensions = current_app.extensions
    if "referee.api.live" not in extensions:
        extensions.setdefault("referee.api.live", live.Live.from_url(services().config.redis_url))
    return extensions["referee.api.live"]


def _over(match: dict) -> bool:
    """Finished or failed: its stream ends with the result, whatever step it resumes at."""
    return match["status"] in (MatchStatus.FINISHED, MatchStatus.FAILED)


def _last_event_id(query: dict) -> int | None:
    """The last step the client has: the Last-Event-ID header (what EventSource sends when
    it reconnects), else the `last_event_id` parameter; None: from the start."""
    header = request.headers.get("Last-Event-ID", "").strip()
    if not header:
        return query.get("last_event_id")
    if not (header.isascii() and header.isdigit() and len(header) <= LAST_EVENT_ID_DIGITS):
        raise invalid({"Last-Event-ID": ["a step number (the id of the last event received)"]})
    return int(header)


def _viewer(store: Store, match: dict, seat: int | None, token_seat: int | None) -> Viewer:
    """Whose view the caller gets, under the replay endpoints' rules: 401 without a token
    and 403 with another token where those answer so."""
    if seat is not None and seat >= match["num_players"]:
        raise not_found(f"seat {seat} (this match has seats 0 to {match['num_players'] - 1})")
    if asked_by_admin():
        return Viewer(seat, whole=True)
    if bearer_token() is not None:
        if token_seat is None:
            raise Problem(403, "auth/forbidden", "Forbidden",
                          "this token is neither the admin token nor a seat token of this "
                          "match")
        if seat not in (None, token_seat):
            raise Problem(403, "auth/forbidden", "Forbidden",
                          f"a seat token streams its own seat ({token_seat}) only")
        return Viewer(token_seat)
    if seat is not None and (match["status"] != MatchStatus.FINISHED
                             or deal_is_secret(store, match)):
        require_admin()  # a seat's view of a match not public yet
    if deal_in_play(store, match):
        require_admin()
    return Viewer(seat)


@dataclass
class TournamentAnnouncer:
    """A tournament's table first, then each counted match and the new table, until the
    final ratings are stored (`finished`). The table built after a message is shared by
    every stream of this process (`Memo`)."""

    store: Store
    memo: live.Memo
    tournament_id: str
    admin: bool

    def opening(self) -> live.Said:
        view = self._view()
        return self._table(view, ended=view["status"] == "finished")

    def heard(self, messages: list[str], last: int) -> live.Said:
        """The matches announced, then the table; `finished` after the announcement of
        the end, which follows every match's (the table may show the end before)."""
        chunks = [live.sse("match", self.memo.get(("match-event", m), lambda m=m:
                                                  self._match_event(m)))
                  for m in messages if m != FINISHED]
        view = self.memo.get(("tournament", self.tournament_id, self.admin, last), self._view)
        said = self._table(view, ended=FINISHED in messages)
        return live.Said(chunks + said.chunks, said.over)

    def check(self) -> live.Said:
        """Without a message for a while: whether it ended (an announcement lost while
        the pub/sub connection was made again)."""
        if self.store.redis.hexists(tournament_key(self.tournament_id), "finished_at"):
            return self._table(self._view(), ended=True)
        return live.Said([])

    def _view(self) -> dict:
        return tournaments.tournament_view(self.store, self.tournament_id, self.admin)

    def _table(self, view: dict, ended: bool) -> live.Said:
        chunks = [live.sse("standings", shape("standings", view))]
        if ended:
            chunks.append(live.sse("finished", shape("finished", view)))
        return live.Said(chunks, ended)

    def _match_event(self, match_id: str) -> bytes:
        match = self.store.get_match(match_id)
        return shape("match", {**match, "match_id": match_id,
                               "tournament_id": self.tournament_id, "steps": match["step"]})


@dataclass
class LeaderboardAnnouncer:
    """The game's leaderboard first, then again after each change (never over: the
    client reconnects after MAX_STREAM_S)."""

    store: Store
    memo: live.Memo
    game: str

    def opening(self) -> live.Said:
        return live.Said([live.sse("leaderboard", self._page())])

    def heard(self, messages: list[str], last: int) -> live.Said:
        return live.Said([live.sse("leaderboard",
                                   self.memo.get(("ratings", self.game, last), self._page))])

    def check(self) -> live.Said:
        return live.Said([])

    def _page(self) -> bytes:
        return leaderboard_page(self.store, self.game, 0, MAX_PAGE)
