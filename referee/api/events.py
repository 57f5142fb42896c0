"""Live event streams (Server-Sent Events, `referee.api.live`):

- GET /matches/{id}/events: `start`, then each `step` (id = its number) as the caller may
  see it, then `result`. No token: the spectator's view; a seat token: that seat's; the
  admin token: every step whole (`seat` picks the view). The same rules as the replay
  endpoints (`referee.match.step_views`), and while another match on its deal is being played
  the match is the admin's only (its public state would tell that match's hidden cards).
- GET /tournaments/{id}/events: `standings`, then `match` and `standings` for every match
  counted, then `finished`.
- GET /ladders/{id}/events: `standings` (the ladder as GET /ladders/{id} shows it), then
  `match` for every match counted and `standings` after it, `entry` for every entry that
  changed (entered, checked, suspended, left).
- GET /ratings/{game}/events: `leaderboard` (the body of GET /ratings/{game}?limit=200),
  then again whenever it changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import orjson
from flask import Blueprint, Response, current_app, request
from marshmallow import Schema, fields, validate

from referee.api import live
from referee.api.auth import asked_by_admin, bearer_token, caller, require_admin
from referee.api.common import MAX_PAGE, STEP, SafeInteger, required
from referee.api.ladders import LADDER_ID, LadderEntrySchema, LadderSchema
from referee.api.matches import ForfeitSchema, ResultSchema, SeatInfoSchema
from referee.api.moves import DecisionClockSchema
from referee.api.operations import GAME, MATCH_ID, TOURNAMENT_ID, component_ref, operation
from referee.api.problems import Problem, invalid, not_found
from referee.api.ratings import RatingsSchema, leaderboard_page
from referee.api.replays import SeenStepSchema
from referee.api.tournaments import (
    CrossTableSchema,
    SoloRankingSchema,
    SprtSchema,
    StandingSchema,
    SwissSchema,
    TournamentProgressSchema,
    TournamentRatingSchema,
)
from referee.api.web import load_query, path_game, services, shared
from referee.errors import (
    AUTH_FORBIDDEN,
    EVENTS_STEP_NOT_RECORDED,
    STREAMS_SERVER_FULL,
    STREAMS_TOO_MANY,
)
from referee.match.step_views import Viewer
from tournament import ladders, tournaments
from tournament.deals import deal_in_play, deal_is_secret
from tournament.store import (
    FINISHED,
    MatchStatus,
    Store,
    ratings_events_channel,
    tournament_events_channel,
)

bp = Blueprint("events", __name__)
# Watchers (every stream but a seat's own) get at most 10 writes a second: a fast match's
# steps come a few at a time, and 200 watchers cost the same at any pace. A seat's client
# hears its turn at once.
WATCHER_INTERVAL_S = 0.25


STREAM_RETRY_S = 5  # Retry-After of a stream refused for want of a slot
LAST_EVENT_ID_DIGITS = 10  # a Last-Event-ID header is a step number of at most 10 digits


class MatchEventsQuerySchema(Schema):
    seat = fields.Integer(validate=validate.Range(min=0), metadata={
        "description": "the seat whose view to stream: the admin's choice (absent: the "
                       "spectator's view, every step whole), anyone's once the replay is "
                       "public; a seat token streams its own seat"})
    last_event_id = fields.Integer(validate=STEP, metadata={
        "description": "resume after this step (as the `Last-Event-ID` header does, which "
                       "wins when both are given): for clients that cannot set headers"})


class StartEventSchema(Schema):
    """`start`: the viewer's view before the first step (sent unless resuming)."""

    match_id = required(fields.String)
    game = required(fields.String)
    seat = required(fields.Integer, allow_none=True, metadata={
        "description": "the viewer's seat; null: the spectator"})
    step = required(fields.Integer, metadata={"description": "0"})
    to_move = required(fields.Integer, allow_none=True)
    view = required(fields.Dict, metadata={
        "description": "the viewer's observation of the initial state"})


class StepEventSchema(Schema):
    """`step` (SSE id = `step`): a recorded step as the viewer may see it, exactly as the
    replay endpoints show it: `played` is `GET /matches/{id}/replay/{step}?seat=N`'s
    `played`, `view` the `view` of `/replay/{step + 1}` without its `log` (which grows with
    every step: the entries this step added are `played.events`, so the log is the `start`
    event's followed by every step's `played.events`)."""

    match_id = required(fields.String)
    step = required(fields.Integer)
    seat = required(fields.Integer, allow_none=True, metadata={
        "description": "the viewer's seat; null: the spectator (or the admin without `seat`)"})
    played = required(fields.Nested, SeenStepSchema, metadata={
        "description": "the step as the viewer knows it (the admin: whole)"})
    view = required(fields.Dict, metadata={
        "description": "the viewer's observation after the step, without `log`"})
    to_move = required(fields.Integer, allow_none=True, metadata={
        "description": "the seat to move after the step; null once the game is over"})
    state = fields.Dict(metadata={"description": "the admin only: the engine state after the "
                                                 "step"})


class UpdateEventSchema(Schema):
    """`update` (a seat token's stream only, after the `step` event of a step that seat
    does not decide next): the message a push bot with `updates` gets (issue 26, docs/bots.md
    "Updates"), so a pull client can ponder on the others' time."""

    protocol = required(fields.String)
    type = required(fields.String, validate=validate.OneOf(["update"]))
    match_id = required(fields.String)
    seat = required(fields.Integer)
    step = required(fields.Integer, metadata={"description": "the step just played"})
    events = required(fields.List, fields.Dict(), metadata={
        "description": "the log entries that step added, as the seat sees them"})
    clock = required(fields.Nested, DecisionClockSchema, allow_none=True, metadata={
        "description": "the clocks after the step (null: the match has no time control); "
                       "`deadline_ms` is what the seat's next decision may take"})


class ResultEventSchema(Schema):
    """`result`: the match is over; the stream ends."""

    match_id = required(fields.String)
    status = required(fields.String, validate=validate.OneOf(["finished", "failed"]))
    steps = required(fields.Integer, metadata={"description": "steps recorded"})
    result = required(fields.Nested, ResultSchema, allow_none=True)
    forfeit = required(fields.Nested, ForfeitSchema, allow_none=True)
    error = required(fields.String, allow_none=True)


class MatchCountedEventSchema(Schema):
    """`match` of `GET /tournaments/{id}/events`: a match of the tournament is over and
    counted."""

    match_id = required(fields.String)
    tournament_id = required(fields.String)
    status = required(fields.String, validate=validate.OneOf(["finished", "failed"]))
    seats = required(fields.List, fields.Nested(SeatInfoSchema))
    result = required(fields.Nested, ResultSchema, allow_none=True)
    forfeit = required(fields.Nested, ForfeitSchema, allow_none=True)
    steps = required(fields.Integer)


class StandingsEventSchema(Schema):
    """`standings` (first on connecting, then after each `match`) and `finished` (the
    last, once the final ratings are stored): the tournament's table as
    `GET /tournaments/{id}` shows it, without its list of matches."""

    id = required(fields.String)
    status = required(fields.String, validate=validate.OneOf(["running", "finished"]))
    progress = required(fields.Nested, TournamentProgressSchema)
    standings = required(fields.List, fields.Nested(StandingSchema))
    cross_table = required(fields.Nested, CrossTableSchema)
    faults = required(fields.Dict, keys=fields.String(), values=SafeInteger())
    ratings = required(fields.List, fields.Nested(TournamentRatingSchema), allow_none=True)
    solo_ranking = required(fields.List, fields.Nested(SoloRankingSchema), allow_none=True)
    sprt = required(fields.Nested, SprtSchema, allow_none=True)
    swiss = required(fields.Nested, SwissSchema, allow_none=True)
    seed = required(fields.Integer, allow_none=True)
    finished_at = required(fields.String, allow_none=True)


class LadderMatchEventSchema(Schema):
    """`match` of `GET /ladders/{id}/events`: a match of the ladder is over and counted."""

    match_id = required(fields.String)
    ladder_id = required(fields.String)
    status = required(fields.String, validate=validate.OneOf(["finished", "failed"]))
    seats = required(fields.List, fields.Nested(SeatInfoSchema))
    result = required(fields.Nested, ResultSchema, allow_none=True)
    forfeit = required(fields.Nested, ForfeitSchema, allow_none=True)
    steps = required(fields.Integer)


EVENT_SCHEMAS: dict[str, type[Schema]] = {
    "start": StartEventSchema, "step": StepEventSchema, "update": UpdateEventSchema,
    "result": ResultEventSchema,
    "match": MatchCountedEventSchema, "standings": StandingsEventSchema,
    "finished": StandingsEventSchema, "leaderboard": RatingsSchema,
}
LADDER_EVENT_SCHEMAS: dict[str, type[Schema]] = {
    "match": LadderMatchEventSchema, "standings": LadderSchema, "entry": LadderEntrySchema}

LAST_EVENT_ID = {
    "name": "Last-Event-ID", "in": "header", "required": False,
    "schema": {"type": "string", "pattern": f"^([0-9]{{1,{LAST_EVENT_ID_DIGITS}}})?$"},
    "description": "resume after this step: the steps after it, no `start` (EventSource "
                   "sends it when it reconnects); empty, as if absent. A step not recorded "
                   "yet of a match not over is a 409 (no event carried its id)"}
SSE_FORMAT = ("One Server-Sent Event (the stream starts with `retry: 3000` and has a "
              "comment `: ping` every 15 s): its `event` name, its `id` where it has one "
              "(a step's number), and its `data`, one line of JSON following the schema of "
              "its event (`contentSchema`).")


def event_stream(summary: str, events: list[str],
                 schemas: dict[str, type[Schema]] = EVENT_SCHEMAS) -> dict:
    """A 200 answer that is a stream of Server-Sent Events. As OpenAPI 3.2's `itemSchema`
    (and schemathesis with a 3.1 `schema`), the schema is that of one event, of the names
    `events`, its JSON data following the component of its schema (`EVENT_SCHEMAS`)."""
    return {"description": summary, "content": {"text/event-stream": {"schema": {
        "type": "object", "description": SSE_FORMAT, "required": ["event", "data"],
        "properties": {
            "event": {"enum": events},
            "id": {"type": "string", "pattern": "^[0-9]+$"},
            "retry": {"type": "integer"},
            "data": {"type": "string", "contentMediaType": "application/json"}},
        "oneOf": [{"properties": {
            "event": {"const": name},
            "data": {"contentSchema": component_ref(schemas[name])}}}
            for name in events]}}}}


STREAM_ERRORS = {
    429: "as many live streams open from this client address as one API process holds for "
         "one (REFEREE_STREAMS_PER_ADDRESS): close one, or retry after `Retry-After` s",
    503: "this API process holds all the live streams it may (REFEREE_STREAMS_PER_PROCESS), "
         "or Redis is unreachable; retry after `Retry-After` s"}
PATHS = {
    "/matches/{match_id}/events": {"get": {**operation(
        "followMatch",
        "Follow a match live: each step as the caller may see it (Server-Sent Events)",
        "live", (200, event_stream(
            "`start` (unless resuming), `step` per recorded step (id = the step number), "
            "on a seat token's stream an `update` after each step that seat does not decide "
            "next, `result` at the end (then the stream ends)",
            ["start", "step", "update", "result"])),
        (400, 401, 403, 404, 409, 429, 503), error_text=STREAM_ERRORS,
        parameters=[MATCH_ID, {"in": "query", "schema": MatchEventsQuerySchema},
                    LAST_EVENT_ID],
        description="The hidden-information rules of the replay endpoints: without a token "
                    "the spectator's view, with a seat token that seat's, with the admin "
                    "token every step whole (and the engine state). A client joining late "
                    "gets every step it missed first; `Last-Event-ID` resumes after that "
                    "step with no gap and no repeat. While another match on its deal is "
                    "being played, the match is the admin's only (401/403)."),
        "security": [{"admin": []}, {"seat": []}, {}]}},
    "/tournaments/{tournament_id}/events": {"get": operation(
        "followTournament",
        "Follow a tournament live: counted matches and the new table (Server-Sent Events)",
        "live", (200, event_stream(
            "`standings` on connecting, then `match` and `standings` for every match "
            "counted, and `finished` once the final ratings are stored (then the stream "
            "ends)", ["standings", "match", "finished"])),
        (404, 429, 503), error_text=STREAM_ERRORS, parameters=[TOURNAMENT_ID],
        security="admin", optional_security=True,
        description="The seed in the table is null until the tournament is over, unless "
                    "the admin asks.")},
    "/ladders/{ladder_id}/events": {"get": operation(
        "followLadder", "Follow a ladder live: counted matches, standings, entries "
        "(Server-Sent Events)", "live", (200, event_stream(
            "`standings` on connecting, then `match` and `standings` for every match "
            "counted, and `entry` for every entry that changed (the stream never ends by "
            "itself)", ["standings", "match", "entry"], LADDER_EVENT_SCHEMAS)),
        (404, 429, 503), error_text=STREAM_ERRORS, parameters=[LADDER_ID])},
    "/ratings/{game}/events": {"get": operation(
        "followRatings", "Follow a game's leaderboard live (Server-Sent Events)", "live",
        (200, event_stream(
            "`leaderboard` (the first page of 200 bots, as `GET /ratings/{game}?limit=200` "
            "answers it) on connecting and whenever a rated match is counted or a "
            "tournament's intervals are stored", ["leaderboard"])),
        (404, 429, 503), error_text=STREAM_ERRORS, parameters=[GAME])},
}


@bp.get("/matches/<id:match_id>/events")
def match_events(match_id: str) -> Response:
    query = load_query(MatchEventsQuerySchema)
    after = _last_event_id(query)
    store = _live().store
    match, token_seat, _ = store.seat_view(match_id, bearer_token())
    if match is None:
        raise not_found(f"match {match_id!r}")
    if after is not None and not _over(match) and after >= match["step"]:
        raise Problem(EVENTS_STEP_NOT_RECORDED,
                      f"step {after} is not recorded yet (the match has {match['step']} "
                      "steps): resume after the id of an event received")
    viewer = _viewer(store, match, query.get("seat"), token_seat)
    seat_client = token_seat is not None and not viewer.whole
    return _stream(live.match_stream(_live(), match, viewer, after, shape,
                                     0.0 if seat_client else WATCHER_INTERVAL_S,
                                     updates=seat_client))


@bp.get("/tournaments/<id:tournament_id>/events")
def tournament_events(tournament_id: str) -> Response:
    store = _live().store
    if tournaments.get_meta(store, tournament_id) is None:
        raise not_found(f"tournament {tournament_id!r}")
    announcer = TournamentAnnouncer(store, _live().memo, tournament_id, asked_by_admin())
    return _stream(live.announcements(_live(), tournament_events_channel(tournament_id),
                                      announcer))


@bp.get("/ladders/<id:ladder_id>/events")
def ladder_events(ladder_id: str) -> Response:
    store = _live().store
    if store.ladder_meta(ladder_id) is None:
        raise not_found(f"ladder {ladder_id!r}")
    announcer = LadderAnnouncer(store, _live().memo, ladder_id)
    return _stream(live.announcements(_live(), store.ladder_events_channel(ladder_id),
                                      announcer))


@bp.get("/ratings/<game>/events")
def ratings_events(game: str) -> Response:
    path_game(game)
    announcer = LeaderboardAnnouncer(_live().store, _live().memo, game)
    return _stream(live.announcements(_live(), ratings_events_channel(game), announcer))


def shape(event: str, data: dict) -> bytes:
    """An event's data dumped through its schema, as JSON."""
    return orjson.dumps(shared(EVENT_SCHEMAS[event]).dump(data))


def _stream(chunks: Iterator[bytes]) -> Response:
    """The stream's response, in a slot of this process's (429 or 503 when there is none:
    `REFEREE_STREAMS_PER_ADDRESS`, `REFEREE_STREAMS_PER_PROCESS`)."""
    address, config, slots = request.remote_addr or "unknown", services().config, _live().slots
    bound = slots.take(address, config.streams_per_address, config.streams_per_process)
    if bound == "address":
        raise Problem(STREAMS_TOO_MANY, f"{config.streams_per_address} live streams are open "
                                        "from this address: close one first",
                      headers={"Retry-After": str(STREAM_RETRY_S)})
    if bound == "process":
        raise Problem(STREAMS_SERVER_FULL, f"this API process holds {config.streams_per_process} "
                                           "live streams, all it may",
                      headers={"Retry-After": str(STREAM_RETRY_S)})
    live.limit_writes(request.environ.get("gunicorn.socket"))
    return Response(slots.held(address, chunks), mimetype="text/event-stream",
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
    if bearer_token() is not None and caller().account is None:  # an account: see below
        if token_seat is None:
            raise Problem(AUTH_FORBIDDEN,
                          "this token is neither the admin token nor a seat token of this "
                          "match")
        if seat not in (None, token_seat):
            raise Problem(AUTH_FORBIDDEN,
                          f"a seat token streams its own seat ({token_seat}) only")
        return Viewer(token_seat)
    if seat is not None and _owner_asks(store, match, seat):
        return Viewer(seat)  # its owner (private:read) watching its bot play, debug and all
    if seat is not None and (match["status"] != MatchStatus.FINISHED
                             or deal_is_secret(store, match)):
        require_admin()  # a seat's view of a match not public yet
    if deal_in_play(store, match):
        require_admin()
    return Viewer(seat)


def _owner_asks(store: Store, match: dict, seat: int) -> bool:
    """Whether the caller is the owner, with private:read, of the bot in that seat."""
    info = match["seats"][seat]
    if info["kind"] != "bot" or caller().account is None:
        return False
    bot = store.get_bot(info["bot_id"])
    return bot is not None and caller().sees_private(bot)


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
        chunks = [live.sse("match", self.memo.get(("match-event", m),
                                                  partial(self._match_event, m)))
                  for m in messages if m != FINISHED]
        view = self.memo.get(("tournament", self.tournament_id, self.admin, last), self._view)
        said = self._table(view, ended=FINISHED in messages)
        return live.Said(chunks + said.chunks, said.over)

    def check(self) -> live.Said:
        """Without a message for a while: whether it ended (an announcement lost while
        the pub/sub connection was made again)."""
        if self.store.tournament_finished(self.tournament_id):
            return self._table(self._view(), ended=True)
        return live.Said([])

    def _view(self) -> dict[str, Any]:
        view = tournaments.tournament_view(self.store, self.tournament_id, self.admin)
        if view is None:
            raise LookupError(f"no tournament {self.tournament_id}")
        return view

    def _table(self, view: dict[str, Any], ended: bool) -> live.Said:
        chunks = [live.sse("standings", shape("standings", view))]
        if ended:
            chunks.append(live.sse("finished", shape("finished", view)))
        return live.Said(chunks, ended)

    def _match_event(self, match_id: str) -> bytes:
        match = self.store.get_match(match_id)
        if match is None:
            raise LookupError(f"no match {match_id}")
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


@dataclass
class LadderAnnouncer:
    """A ladder's standings first, then each counted match with the standings after it,
    and each entry that changed (never over: the client reconnects after MAX_STREAM_S)."""

    store: Store
    memo: live.Memo
    ladder_id: str

    def opening(self) -> live.Said:
        return live.Said([live.sse("standings", self._standings())])

    def heard(self, messages: list[str], last: int) -> live.Said:
        chunks = []
        for message in messages:
            kind, _, subject = message.partition(" ")
            if kind == "match":
                chunks.append(live.sse("match", self.memo.get(
                    ("ladder-match", subject), partial(self._match_event, subject))))
            elif kind == "entry":
                chunks.append(live.sse("entry", self._entry_event(subject)))
            elif kind == "standings":
                chunks.append(live.sse("standings", self.memo.get(
                    ("ladder", self.ladder_id, last), self._standings)))
        return live.Said(chunks)

    def check(self) -> live.Said:
        return live.Said([])

    def _standings(self) -> bytes:
        view = ladders.ladder_view(self.store, self.ladder_id)
        if view is None:
            raise LookupError(f"no ladder {self.ladder_id}")
        return _ladder_shape("standings", view)

    def _match_event(self, match_id: str) -> bytes:
        match = self.store.get_match(match_id)
        if match is None:
            raise LookupError(f"no match {match_id}")
        return _ladder_shape("match", {**match, "match_id": match_id,
                                       "ladder_id": self.ladder_id, "steps": match["step"]})

    def _entry_event(self, bot_id: str) -> bytes:
        entry = self.store.ladder_entry(self.ladder_id, bot_id)
        if entry is None:
            raise LookupError(f"no entry {bot_id}")
        return _ladder_shape("entry", ladders.entry_view(entry))


def _ladder_shape(event: str, data: dict) -> bytes:
    return orjson.dumps(shared(LADDER_EVENT_SCHEMAS[event]).dump(data))
