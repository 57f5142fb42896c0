"""Test bots: one real HTTP server on loopback whose URL path picks the behaviour.

| path | answer |
| --- | --- |
| `/random` | a legal action drawn from a generator seeded by match id and step |
| `/first` | the first legal action |
| `/slow` | a legal action, but only after `SLOW_S` seconds (a timeout) |
| `/error` | HTTP 500 |
| `/garbage` | a body that is not JSON |
| `/noaction` | JSON without an "action" object |
| `/illegal` | a well-formed action the rules refuse now (legal elsewhere in the game) |
| `/unknown` | an action of a type no game has (malformed) |
| `/trickle` | a good answer, one byte every `TRICKLE_S` seconds |
| `/close` | closes the connection without answering |
| `/huge` | a 2 MB body |
| `/lognew` | as `/random`, asking for the log's new entries only (`"log": "new"`) |
| `/lognewfaulty` | as `/lognew`, but without an "action" at every step divisible by 3 |
| `/numberish` | the first legal action, with 4 KiB of debug and an info shaped like numbers |

Every decision request is kept in `received[path]` so tests can compare what a bot was
sent with what the replay says it saw; result notices (`"type": "result"`) are kept in
`notices[path]` and answered 200. Answers leave in one write (no Nagle delay).
"""

from __future__ import annotations

import functools
import json
import random
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler

import engines
from bots.python import sdk
from referee.match.botclient import MAX_DEBUG_BYTES

SLOW_S = 1.0
DEAF_UPDATE_S = 3.0
TRICKLE_S = 0.05
UNKNOWN_ACTION = {"type": "__no_such_action__"}
HEALTHY_DEADLINE_MS = 3000

# Each faulty bot (path, or "refused": a URL where nothing listens) and its fault code.
FAULTS = [("/slow", "timeout"), ("refused", "crash"), ("/error", "crash"),
          ("/garbage", "malformed"), ("/noaction", "malformed"), ("/unknown", "malformed"),
          ("/illegal", "illegal")]


# Answers the test bots share (the hardening tests' bots reuse them).
ERROR_ANSWER = (500, b'{"error": "the bot fell over"}')
GARBAGE_ANSWER = (200, b"<html>this is not json</html>")
UNKNOWN_ANSWER = (200, json.dumps({"action": UNKNOWN_ACTION}).encode())


@functools.cache
def well_formed_actions(game: str) -> tuple[str, ...]:
    """Actions legal somewhere in a few random playouts of `game` (so well formed), as
    JSON; trade offers are left out (an offer not listed may still be legal)."""
    engine = engines.get(game)
    seen: dict[str, None] = {}
    for variant in engine.variants():
        for seed in range(3):
            state = engine.new_game(variant["num_players"], seed, variant["options"])
            chooser = random.Random(seed)
            while not engine.is_over(state):
                legal = engine.legal_actions(state)
                for action in legal:
                    if "offer" not in action["type"]:
                        seen[json.dumps(action, sort_keys=True)] = None
                state = engine.apply(state, chooser.choice(legal))
    return tuple(seen)


def illegal_answer(payload: dict) -> bytes:
    """A well-formed action that is not among the legal actions of this decision."""
    offered = {json.dumps(action, sort_keys=True) for action in payload["legal_actions"]}
    action = next(a for a in well_formed_actions(payload["game"]) if a not in offered)
    return b'{"action": ' + action.encode() + b"}"


def random_answer(payload: dict) -> bytes:
    """A legal action drawn from a generator seeded by match id and step."""
    chooser = random.Random(f"{payload['match_id']}:{payload['step']}")
    return json.dumps({"action": chooser.choice(payload["legal_actions"])}).encode()


def huge_answer(size: int) -> bytes:
    return b'{"action": {"type": "x"}, "pad": "' + b"x" * size + b'"}'


def send(handler: BaseHTTPRequestHandler, status: int, body: bytes, per_byte_s: float = 0.0,
         extra_headers: str = "") -> None:
    """Answer in one write, or (`per_byte_s`) the head and then one byte at a time."""
    head = (f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{extra_headers}"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    try:
        if not per_byte_s:
            handler.wfile.write(head + body)
            return
        handler.wfile.write(head)
        for index in range(len(body)):
            time.sleep(per_byte_s)
            handler.wfile.write(body[index:index + 1])
    except (BrokenPipeError, ConnectionResetError):
        handler.close_connection = True


def _answer(path: str, payload: dict) -> tuple[int, bytes]:
    if path in ("/random", "/deafupdates", "/badupdates"):
        return 200, random_answer(payload)
    if path == "/lognew" or (path == "/lognewfaulty" and payload["step"] % 3):
        return 200, random_answer(payload)[:-1] + b', "log": "new"}'
    if path == "/lognewfaulty":
        return 200, json.dumps({"move": payload["legal_actions"][0], "log": "new"}).encode()
    if path == "/first":
        return 200, json.dumps({"action": payload["legal_actions"][0]}).encode()
    if path == "/chatty":  # the debug channel: 5,000 characters of debug, a 2 KiB info
        return 200, json.dumps({"action": payload["legal_actions"][0],
                                "debug": f"step {payload['step']} " + "é" * 5000,
                                "info": {"depth": payload["step"], "score": 0.5,
                                         "pv": ["x" * 100] * 20}}).encode()
    if path == "/numberish":  # debug and info shaped like numbers, debug at its 4 KiB cap
        return 200, json.dumps({"action": payload["legal_actions"][0],
                                "debug": "1." * (MAX_DEBUG_BYTES // 2),
                                "info": {"pv": "1e-" * 300, "eval": ":1.5,[2.25"}}).encode()
    if path == "/deepinfo":  # info nested past what JSON writers write, and 50,000 members
        deep = "[]"
        for _ in range(400):
            deep = '{"a": ' + deep + '}'
        members = ", ".join(f'"k{n}": {n}' for n in range(50_000))
        return 200, (f'{{"action": {json.dumps(payload["legal_actions"][0])}, '
                     f'"info": {{"many": {{{members}}}, "deep": {deep}}}, '
                     f'"debug": {{"not": "a string"}}}}').encode()
    if path == "/slow":
        time.sleep(SLOW_S)
        return 200, random_answer(payload)
    if path == "/noaction":
        return 200, json.dumps({"move": payload["legal_actions"][0]}).encode()
    if path == "/huge":
        return 200, huge_answer(2_000_000)
    if path == "/illegal":
        return 200, illegal_answer(payload)
    canned = {"/error": ERROR_ANSWER, "/garbage": GARBAGE_ANSWER, "/unknown": UNKNOWN_ANSWER}
    return canned.get(path, (404, b'{"error": "unknown bot"}'))


def _update_answer(path: str) -> tuple[int, bytes]:
    """Updates are answered at once with {}, except by the bots that answer them badly:
    `/deafupdates` only after DEAF_UPDATE_S, `/badupdates` with a 500 and junk."""
    if path == "/deafupdates":
        time.sleep(DEAF_UPDATE_S)
    if path == "/badupdates":
        return 500, b"\x00 not json"
    return 200, b"{}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: BotServer

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length", 0))
        payload = json.loads(self.rfile.read(length))
        if payload.get("type") == "result":
            self.server.notices[self.path].append(payload)
            send(self, 200, b"{}")
            return
        if payload.get("type") == "update":
            self.server.record_update(self.path, payload)
            send(self, *_update_answer(self.path))
            return
        self.server.record(self.path, payload, self.client_address[1])
        if self.path == "/close":
            self.close_connection = True
            return
        if self.path == "/trickle":
            send(self, 200, random_answer(payload), per_byte_s=TRICKLE_S)
            return
        send(self, *_answer(self.path, payload))

    def log_message(self, *args) -> None:
        """Quiet."""


class BotServer(sdk.BotServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.received: dict[str, list[dict]] = defaultdict(list)
        self.notices: dict[str, list[dict]] = defaultdict(list)
        self.updates: dict[str, list[dict]] = defaultdict(list)
        self.client_ports: list[int] = []
        self._lock = threading.Lock()

    def record(self, path: str, payload: dict, client_port: int) -> None:
        with self._lock:
            self.received[path].append(payload)
            self.client_ports.append(client_port)

    def record_update(self, path: str, payload: dict) -> None:
        with self._lock:
            self.updates[path].append(payload)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def start(self) -> BotServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self


def fault_url(server: BotServer, refused_url: str, path: str) -> str:
    """The URL of a faulty bot of FAULTS."""
    return refused_url if path == "refused" else server.url(path)


def deadline_for(path: str) -> int:
    """Short for the slow bot (a timeout), generous for the others: on a loaded machine a
    loopback round trip can take far longer than usual, and must not turn into a timeout."""
    return 250 if path == "/slow" else HEALTHY_DEADLINE_MS
