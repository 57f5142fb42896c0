"""Live event streams (Server-Sent Events): a match's steps as one viewer may see them, a
tournament's counted matches and standings, a game's leaderboard.

Under `referee serve` every stream is a greenlet of a gevent worker that blocks on Redis
cooperatively. Each API process holds one pub/sub connection (`Hub`), subscribed to the
channels its open streams follow, and hands every message to them (the streams have a
small pool of Redis connections of their own, `Live.from_url`):
- a match's driver PUBLISHes each recorded step's number, then "end"
  (`tournament.store.events_channel`). The streams of one match in a process share one
  `MatchFeed`: a message makes the first stream that wakes read the new steps (one Redis
  round trip for all of them); the others find them read. Each step's event for a viewer
  is built once per process (`Rendering`) and every stream of that viewer sends it.
- counting a match PUBLISHes its id on its tournament's and (when rated) its game's
  channel (`tournament.results`); the stream sends the match and the table again, built
  once per process and message (`Memo`).

A stream never trusts the messages alone: it reads again at least every `POLL_S` (a message
lost while the pub/sub connection was re-made delays it, never skips a step), and a step is
sent only from what Redis holds, in order, from the client's `Last-Event-ID` on; the steps
read at once leave in one write. Memory per stream is a cursor (the events are the
feed's, kept while the match is followed in the process); a stream holds no Redis
connection while it waits or writes (it borrows one from the pool per read); a client
that reads nothing for `WRITE_TIMEOUT_S` is disconnected, and every stream ends after
`MAX_STREAM_S` (the client reconnects with its Last-Event-ID, as EventSource does by
itself).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import redis

import engines
from referee.match.botclient import PROTOCOL
from referee.match.clock import Clocks, TimeControl
from referee.match.replay import StepRecord
from referee.match.rerun import FORFEIT
from referee.match.step_views import SeenStep, Viewer, see_step
from tournament.store import MatchStatus, Store, events_channel
from tournament.store.connection import connect

log = logging.getLogger(__name__)

PING_S = 15.0  # a comment line this often keeps proxies and clients from timing out
POLL_S = 5.0  # at least this often a stream reads Redis even without a message
RETRY_MS = 3000  # how long EventSource waits before it reconnects
WRITE_TIMEOUT_S = 30.0  # a client that reads nothing for this long is disconnected
MAX_STREAM_S = 1800.0  # then the client reconnects (with its Last-Event-ID)
SUBSCRIBE_WAIT_S = 2.0  # for the pub/sub subscription before the first read
HUB_ERROR_PAUSE_S = 1.0
INBOX_LIMIT = 1000  # messages kept per tournament or leaderboard stream between reads
MEMO_ENTRIES = 64
BATCH_EVENTS = 32  # at most this many events in one write
LIVE_CONNECTIONS = 20  # Redis connections of the streams of one API process
POOL_WAIT_S = 10.0
OVER = (MatchStatus.FINISHED.value, MatchStatus.FAILED.value)
T = TypeVar("T")
Shape = Callable[[str, dict], bytes]  # (event name, data) -> the data as JSON
Listener = Callable[[bytes, int], None]  # (a message's data, its number in the hub)


# ----- the wire format ------------------------------------------------------------------
def sse(event: str, data: bytes, event_id: int | None = None) -> bytes:
    """One Server-Sent Event: its name, its id when given, its data (one line of JSON)."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: ".encode() + data + b"\n\n"


RETRY = f"retry: {RETRY_MS}\n\n".encode()
PING = b": ping\n\n"


# ----- one pub/sub connection per process -----------------------------------------------
class Hub:
    """One pub/sub connection shared by the streams of this process: subscribed to a
    channel while a stream listens to it; a thread (a greenlet under gevent) reads the
    messages and calls each listener with the message's data and a number that grows
    with every message this hub hears (the same for every listener of that message)."""

    def __init__(self, pubsub: redis.client.PubSub):
        self._pubsub = pubsub
        self._lock = threading.Lock()
        self._listeners: dict[str, set[Listener]] = {}
        self._ready: dict[str, threading.Event] = {}
        self._thread: threading.Thread | None = None
        self._heard = 0

    def listen(self, channel: str, listener: Listener) -> threading.Event:
        """Call `listener` with each message on `channel` from now on; the event is set
        once the subscription is in place (so a read after it misses nothing)."""
        with self._lock:
            listeners = self._listeners.setdefault(channel, set())
            ready = self._ready.setdefault(channel, threading.Event())
            listeners.add(listener)
            if len(listeners) == 1:
                self._send(self._pubsub.subscribe, channel)
            self._start()
        return ready

    def forget(self, channel: str, listener: Listener) -> None:
        with self._lock:
            listeners = self._listeners.get(channel, set())
            listeners.discard(listener)
            if not listeners and channel in self._listeners:
                del self._listeners[channel]
                del self._ready[channel]
                self._send(self._pubsub.unsubscribe, channel)

    def _send(self, command: Callable[[str], object], channel: str) -> None:
        """(Un)subscribe; on a Redis error the streams read on their own until the
        connection is made again (which subscribes every channel listened to again)."""
        try:
            command(channel)
        except redis.RedisError as error:
            log.warning("pub/sub %s of %s failed: %s", command.__name__, channel, error)

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="referee-live-hub",
                                            daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                message = self._pubsub.get_message(timeout=POLL_S)
            except (redis.RedisError, OSError) as error:
                log.warning("pub/sub connection lost (%s); reconnecting", error)
                time.sleep(HUB_ERROR_PAUSE_S)
                continue
            if message:
                self._dispatch(message)

    def _dispatch(self, message: dict) -> None:
        channel = message["channel"].decode()
        with self._lock:
            if message["type"] == "subscribe" and channel in self._ready:
                self._ready[channel].set()
            if message["type"] != "message":
                return
            self._heard += 1
            heard, listeners = self._heard, list(self._listeners.get(channel, ()))
        for listener in listeners:
            listener(message["data"], heard)


# ----- values built once per process ----------------------------------------------------
class Memo:
    """Values computed once per key by whichever stream asks first, the others waiting for
    it; the latest `size` are kept."""

    def __init__(self, size: int = MEMO_ENTRIES):
        self._size = size
        self._values: OrderedDict[tuple, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._computing: dict[tuple, threading.Lock] = {}

    def get(self, key: tuple, compute: Callable[[], T]) -> T:
        with self._lock:
            if key in self._values:
                return self._values[key]
            computing = self._computing.setdefault(key, threading.Lock())
        with computing:
            with self._lock:
                if key in self._values:
                    return self._values[key]
            value = compute()
            with self._lock:
                self._values[key] = value
                while len(self._values) > self._size:
                    self._values.popitem(last=False)
                self._computing.pop(key, None)
        return value


# ----- a match's steps, shared by its streams -------------------------------------------
class MatchFeed:
    """The recorded steps of one match as this process has read them (append-only), and
    its end once over."""

    def __init__(self, store: Store, match_id: str):
        self.store = store
        self.match_id = match_id
        self.steps: list[StepRecord] = []
        self.end: dict | None = None  # status, result, forfeit, error once over
        self.users = 0
        self._renderings: dict[str, Rendering] = {}
        self._rendering = threading.Lock()
        self._changed = threading.Event()  # set (and replaced) at each message
        self._notifying = threading.Lock()
        self._version = 0  # messages heard
        self._read_version = -1
        self._read_at = 0.0
        self._reading = threading.Lock()

    def rendering(self, match: dict, viewer: Viewer, shape: Shape) -> Rendering:
        """The events of `viewer`, shared by its streams in this process."""
        with self._rendering:
            if viewer.key not in self._renderings:
                self._renderings[viewer.key] = Rendering(match, viewer, shape)
            return self._renderings[viewer.key]

    def notify(self, _message: bytes, _heard: int) -> None:
        with self._notifying:
            self._version += 1
            changed, self._changed = self._changed, threading.Event()
        changed.set()  # wakes every stream waiting, each on its own (no shared lock)

    @property
    def version(self) -> int:
        return self._version

    def wait(self, version: int, timeout: float) -> None:
        """Until a message comes after `version`, or `timeout` s."""
        changed = self._changed
        if self._version == version:
            changed.wait(timeout)

    def refresh(self) -> None:
        """Read what Redis holds beyond the steps known, unless this process read it since
        the last message (and within POLL_S)."""
        with self._reading:
            version = self._version
            if self.end or (version == self._read_version
                            and time.monotonic() - self._read_at < POLL_S):
                return
            self._read_version, self._read_at = version, time.monotonic()
            self._read()

    def _read(self) -> None:
        """Status and new steps in one transaction: the driver's last write (END_MATCH) stores
        the replay and drops the steps list at once, so a finished match is read from its
        replay."""
        match, new_steps = self.store.steps_after(self.match_id, len(self.steps))
        status = match.get("status")
        if status == MatchStatus.FINISHED.value:
            record = self.store.get_replay(self.match_id)  # archived: read back
            self.steps.extend(record["steps"][len(self.steps):] if record else [])
        else:
            self.steps.extend(new_steps)
        if status in OVER:
            self.end = {key: match[key] for key in ("status", "result", "forfeit", "error")}


class Rendering:
    """The events of one viewer of one match, built in order once per process and kept
    while the match is followed: every stream of that viewer sends slices of them (a
    step's event costs one `see_step` per process, not one per client)."""

    def __init__(self, match: dict, viewer: Viewer, shape: Shape):
        self.engine = engines.get(match["game"], match["game_version"])
        self.viewer, self.match_id, self.shape = viewer, match["id"], shape
        self.state = self.engine.new_game(match["num_players"], match["seed"],
                                          match["options"])
        self.view = self.engine.observation(self.state, viewer.seat)
        self.start = sse("start", shape("start", {
            "match_id": match["id"], "game": match["game"], "seat": viewer.seat, "step": 0,
            "to_move": self.view["to_move"], "view": self.view}))
        self.events: list[bytes] = []  # the event of step k at index k
        self.told: list[bytes] = []  # a seat's: the event of step k then its update, if any
        control = TimeControl.from_dict(match.get("time_control"))
        self.clocks = None if control is None else Clocks.start(control, match["num_players"])
        self._result: bytes | None = None
        self._building = threading.Lock()

    def extend(self, steps: list[StepRecord], updates: bool = False) -> list[bytes]:
        """The events of `steps` (built for those not built yet); append-only. With
        `updates` (a seat's own stream), each step's event is followed by the seat's
        `update` event when the seat is not the one to move next (issue 26)."""
        with self._building:
            while len(self.events) < len(steps):
                played = steps[len(self.events)]
                event, update = self._event(played)
                self.events.append(event)
                self.told.append(event + update)
        return self.told if updates else self.events

    def result(self, end: dict) -> bytes:
        """The `result` event, once every step's event is built (the same for every
        viewer; built once)."""
        if self._result is None:
            self._result = sse("result", self.shape("result", {
                "match_id": self.match_id, "steps": len(self.events), **end}))
        return self._result

    def _event(self, played: StepRecord) -> tuple[bytes, bytes]:
        """A step's event, and the seat's update after it (b"" when none); the event's view
        leaves out the log, which grows with every step: the new entries are the step's
        `played.events` (the whole log is the start's and every step's events)."""
        seen = see_step(self.engine, self.state, self.view, played, self.viewer)
        self.state, self.view = seen.after, seen.view_after
        if self.clocks is not None:
            self.clocks.charge(played["seat"], played["elapsed_ms"])
        data = {"match_id": self.match_id, "step": played["step"], "seat": self.viewer.seat,
                "played": seen.played, "to_move": seen.view_after["to_move"],
                "view": {key: value for key, value in seen.view_after.items() if key != "log"}}
        if self.viewer.whole:
            data["state"] = self.engine.to_json(seen.after)
        return sse("step", self.shape("step", data), played["step"]), self._update(seen)

    def _update(self, seen: SeenStep) -> bytes:
        """The `update` event of the viewer's seat after a step, as a push bot would get it:
        none for the seat to move next, once the match is over, or for a spectator."""
        seat, played = self.viewer.seat, seen.played
        forfeit = played["fault"] is not None and played["fault"]["policy"] == FORFEIT
        if seat is None or self.viewer.whole or forfeit or seen.view_after["to_move"] in (
                None, seat):
            return b""
        return sse("update", self.shape("update", {
            "protocol": PROTOCOL, "type": "update", "match_id": self.match_id, "seat": seat,
            "step": played["step"], "events": played["events"],
            "clock": None if self.clocks is None else self.clocks.payload(seat)}))


# ----- the streams ----------------------------------------------------------------------
class StreamSlots:
    """The streams one API process holds open, counted per client address: a client that
    opens more than its share (each stream a greenlet and one of the worker's connections,
    for up to MAX_STREAM_S) would leave none for other requests."""

    def __init__(self) -> None:
        self._open: Counter[str] = Counter()
        self._lock = threading.Lock()

    def take(self, address: str, per_address: int, per_process: int) -> str | None:
        """A slot for a stream of `address` (None), or which bound it would pass: "address"
        or "process"; per_address 0: no bound per address."""
        with self._lock:
            if sum(self._open.values()) >= per_process:
                return "process"
            if per_address and self._open[address] >= per_address:
                return "address"
            self._open[address] += 1
            return None

    def held(self, address: str, chunks: Iterator[bytes]) -> HeldStream:
        """`chunks` as a response body that gives its slot back once the server closes it
        (begun or not: a generator never begun would run no `finally`)."""
        return HeldStream(chunks, lambda: self._give_back(address))

    def _give_back(self, address: str) -> None:
        with self._lock:
            self._open[address] -= 1
            if not self._open[address]:
                del self._open[address]


class HeldStream:
    """A stream's chunks holding its slot until closed."""

    def __init__(self, chunks: Iterator[bytes], release: Callable[[], None]):
        self.chunks, self.release = chunks, release

    def __iter__(self) -> HeldStream:
        return self

    def __next__(self) -> bytes:
        return next(self.chunks)

    def close(self) -> None:
        release, self.release = self.release, lambda: None
        release()
        close = getattr(self.chunks, "close", None)
        if close is not None:
            close()


@dataclass
class Live:
    """The live machinery of one API process: its Redis connections, its hub, the feeds of
    the matches followed, the events built."""

    store: Store

    @classmethod
    def from_url(cls, url: str) -> Live:
        """With connections of its own, at most LIVE_CONNECTIONS (the pub/sub one
        included): a burst of clients connecting waits for one, up to POOL_WAIT_S (then
        503), rather than failing at once or taking the connections the rest of the API
        needs."""
        return cls(Store(connect(url, max_connections=LIVE_CONNECTIONS,
                                 pool_wait_s=POOL_WAIT_S)))

    def __post_init__(self) -> None:
        self.hub = Hub(self.store.subscriber())
        self.memo = Memo()
        self.slots = StreamSlots()
        self._feeds: dict[str, MatchFeed] = {}
        self._lock = threading.Lock()

    @contextmanager
    def feed(self, match: dict) -> Iterator[MatchFeed]:
        """The match's feed, subscribed to its channel while a stream uses it (a match over
        needs no subscription)."""
        match_id = match["id"]
        with self._lock:
            feed = self._feeds.get(match_id) or MatchFeed(self.store, match_id)
            self._feeds[match_id] = feed
            feed.users += 1
        listening = match["status"] not in OVER
        if listening:
            self.hub.listen(events_channel(match_id), feed.notify).wait(SUBSCRIBE_WAIT_S)
        try:
            yield feed
        finally:
            if listening:
                self.hub.forget(events_channel(match_id), feed.notify)
            with self._lock:
                feed.users -= 1
                if not feed.users:
                    del self._feeds[match_id]

    @contextmanager
    def inbox(self, channel: str) -> Iterator[Inbox]:
        """The messages of `channel` from now on (once subscribed), for one stream."""
        box = Inbox()
        self.hub.listen(channel, box.put).wait(SUBSCRIBE_WAIT_S)
        try:
            yield box
        finally:
            self.hub.forget(channel, box.put)


class Inbox:
    """Messages heard for one stream and not yet handled (at most INBOX_LIMIT, the oldest
    dropped: a stream that fell behind sends the latest table anyway)."""

    def __init__(self) -> None:
        self._items: deque[tuple[str, int]] = deque(maxlen=INBOX_LIMIT)
        self._changed = threading.Condition()

    def put(self, message: bytes, heard: int) -> None:
        with self._changed:
            self._items.append((message.decode(), heard))
            self._changed.notify_all()

    def take(self, timeout: float) -> list[tuple[str, int]]:
        """The messages heard so far with their numbers, waiting up to `timeout` s."""
        with self._changed:
            self._changed.wait_for(lambda: self._items, timeout)
            taken = list(self._items)
            self._items.clear()
        return taken


class Clock:
    """When a stream pings next, and when it ends."""

    def __init__(self) -> None:
        now = time.monotonic()
        self.next_ping = now + PING_S
        self.ends_at = now + MAX_STREAM_S

    def wait_s(self) -> float:
        return max(0.0, min(self.next_ping, self.ends_at) - time.monotonic())

    def ping_due(self) -> bool:
        if time.monotonic() < self.next_ping:
            return False
        self.next_ping = time.monotonic() + PING_S
        return True

    def over(self) -> bool:
        return time.monotonic() >= self.ends_at


def match_stream(live: Live, match: dict, viewer: Viewer, after: int | None,
                 shape: Shape, interval_s: float = 0.0, updates: bool = False
                 ) -> Iterator[bytes]:
    """The `start` event (unless resuming after step `after`), every step from there as
    `viewer` sees it (`step`, id = the step's number; with `updates`, the seat's `update`
    after it), then `result`. `shape(name, data)` gives each event's data as the API's
    schemas dump it. Writes are at least `interval_s` apart: the steps of a fast match
    come a few at a time, in one write."""
    yield RETRY
    clock = Clock()
    written = 0.0
    cursor = 0 if after is None else after + 1  # the next step to send
    with live.feed(match) as feed:
        rendering = feed.rendering(match, viewer, shape)
        if after is None:
            yield rendering.start
        while True:
            version = feed.version
            feed.refresh()
            events = rendering.extend(feed.steps, updates)
            while cursor < len(events):
                yield b"".join(events[cursor:cursor + BATCH_EVENTS])
                cursor, written = min(cursor + BATCH_EVENTS, len(events)), time.monotonic()
            if feed.end:
                yield rendering.result(feed.end)
                return
            if clock.over():
                return
            feed.wait(version, min(clock.wait_s(), POLL_S))
            if clock.ping_due():
                yield PING
            time.sleep(max(0.0, written + interval_s - time.monotonic()))


# ----- tournaments and leaderboards -----------------------------------------------------
@dataclass
class Said:
    """Events to send, and whether the stream ends after them."""

    chunks: list[bytes]
    over: bool = False


class Announcer(Protocol):
    """What a stream of announcements says: first, on messages (with the number of the
    last one, to share what is built for it), and every PING_S without any."""

    def opening(self) -> Said: ...

    def heard(self, messages: list[str], last: int) -> Said: ...

    def check(self) -> Said: ...


def announcements(live: Live, channel: str, announcer: Announcer) -> Iterator[bytes]:
    """The events `announcer` says about `channel` (subscribed before the opening is
    read, so nothing announced in between is missed), with pings, until it is over."""
    yield RETRY
    clock = Clock()
    with live.inbox(channel) as inbox:
        said = announcer.opening()
        while True:
            yield from said.chunks
            if said.over or clock.over():
                return
            messages = inbox.take(clock.wait_s())
            if messages:
                said = announcer.heard([message for message, _ in messages], messages[-1][1])
            elif clock.ping_due():
                yield PING
                said = announcer.check()
            else:
                said = Said([])


# ----- clients that do not read ---------------------------------------------------------
def limit_writes(sock: socket.socket | None) -> None:
    """Writes to a stream's client socket (gunicorn's, when served by gunicorn) time out
    after WRITE_TIMEOUT_S: a client that reads nothing fills its buffers, the write fails
    and the stream ends, releasing its greenlet and its feed."""
    if sock is not None:
        sock.settimeout(WRITE_TIMEOUT_S)
