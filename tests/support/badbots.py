"""Misbehaving bots for the hardening tests: one real HTTP server on loopback whose URL path
picks the behaviour (a good bot is there too, for the healthy seats).

| path | answer |
| --- | --- |
| `/good` | a legal action drawn from a generator seeded by match id and step |
| `/slow` | a good answer, but `SLOW_S` seconds late (past the deadline) |
| `/hang` | nothing, ever: the request is held open until the server shuts down |
| `/close` | closes the connection without answering |
| `/error` | HTTP 500 |
| `/garbage` | a body that is not JSON |
| `/huge` | a 10 MB body |
| `/illegal` | a well-formed action the rules refuse now |
| `/unknown` | an action of a type no game has (malformed) |
| `/deep` | a legal action with a junk field nested 300 deep |
| `/junk` | a legal action with a 900 kB junk field |
| `/floats` | a legal action with its whole numbers written as floats (2.0): well formed |
| `/other-seat` | a legal action that was offered to another seat of the match, not to this one |
| `/stale` | a legal action of its own previous decision that is not legal any more |
| `/trickle` | a good answer, one byte per second |
| `/slow-head` | a status line and headers, one byte every `DRIP_S` seconds, never ending |
| `/continue` | `HTTP/1.1 100 Continue` every `DRIP_S` seconds, never a final answer |
| `/gate` | a good answer, except that its first decision at `GATE_STEP` waits for `gate` |
| `/steady` | a good answer after `STEADY_S` seconds (well within any deadline) |
| `/think` | a good answer after `THINK_S` seconds: a bot that thinks |
| `/redirect` | 302 to a host outside the allowlist (the referee must not follow) |

Every decision request is kept by match (with its arrival time, `at`), so `/other-seat`
can answer with what the other seat was offered, and tests can compare what a bot was sent
with the replay.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler

from bots.python import sdk
from tests.support.botserver import (
    ERROR_ANSWER,
    GARBAGE_ANSWER,
    UNKNOWN_ANSWER,
    huge_answer,
    illegal_answer,
    random_answer,
    send,
)

SLOW_S = 2.0
TRICKLE_S = 1.0
DRIP_S = 0.2
SLOW_HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: "
             + b"x" * 200 + b"\r\nContent-Length: 40\r\n\r\n")
HUGE_BYTES = 10_000_000
GATE_STEP = 3
STEADY_S = 0.02
THINK_S = 0.1
REDIRECT_TO = "http://10.255.255.1/bot"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: BadBots

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        payload = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        if payload.get("type") == "result":
            send(self, 200, b"{}")
            return
        earlier = self.server.record(self.path, payload)
        if self.path == "/close":
            self.close_connection = True
        elif self.path == "/hang":
            self.server.stopping.wait()
            self.close_connection = True
        elif self.path in ("/slow-head", "/continue"):
            self._drip(SLOW_HEAD if self.path == "/slow-head" else None)
        elif self.path == "/trickle":
            send(self, 200, random_answer(payload), per_byte_s=TRICKLE_S)
        elif self.path == "/huge":
            send(self, 200, huge_answer(HUGE_BYTES))
        else:
            status, body = self._answer(payload, earlier)
            extra = f"Location: {REDIRECT_TO}\r\n" if status == 302 else ""
            send(self, status, body, extra_headers=extra)

    def _drip(self, head: bytes | None) -> None:
        """Write `head` one byte per DRIP_S, or (None) a 100 Continue per DRIP_S, until the
        referee hangs up or the server stops."""
        self.close_connection = True
        index = 0
        while not self.server.stopping.wait(DRIP_S):
            chunk = (head[index:index + 1] if head is not None
                     else b"HTTP/1.1 100 Continue\r\n\r\n")
            if not chunk:
                return
            try:
                self.wfile.write(chunk)
                self.wfile.flush()
            except OSError:
                return
            index += 1

    def _answer(self, payload: dict, earlier: list[dict]) -> tuple[int, bytes]:
        canned = {"/error": ERROR_ANSWER, "/garbage": GARBAGE_ANSWER, "/unknown": UNKNOWN_ANSWER}
        if self.path in canned:
            return canned[self.path]
        if self.path == "/illegal":
            return 200, illegal_answer(payload)
        if self.path in ("/deep", "/junk", "/floats"):
            return 200, _decorated(self.path, payload)
        if self.path == "/other-seat":
            offered = [p for p in earlier if p["seat"] != payload["seat"]]
            return 200, _one_of(offered[-1:], payload)
        if self.path == "/stale":
            mine = [p for p in earlier if p["seat"] == payload["seat"]]
            return 200, _one_of(mine[-1:], payload)
        if self.path == "/redirect":
            return 302, json.dumps({"location": REDIRECT_TO}).encode()
        if self.path in ("/slow", "/steady", "/think"):
            time.sleep({"/slow": SLOW_S, "/steady": STEADY_S, "/think": THINK_S}[self.path])
        if self.path == "/gate" and payload["step"] == GATE_STEP and self.server.first_at_gate():
            self.server.gate.wait(30)
        return 200, random_answer(payload)

    def log_message(self, *args) -> None:
        """Quiet."""


def _decorated(path: str, payload: dict) -> bytes:
    """A legal action, then spoiled (`/deep`, `/junk`) or rewritten with floats (`/floats`)."""
    action = json.loads(random_answer(payload))["action"]
    if path == "/floats":
        action = {key: float(value) if isinstance(value, int) and not isinstance(value, bool)
                  else value for key, value in action.items()}
        return json.dumps({"action": action}).encode()
    junk = "[" * 300 + "]" * 300 if path == "/deep" else json.dumps("x" * 900_000)
    return json.dumps({"action": action})[:-2].encode() + f', "junk": {junk}}}}}'.encode()


def _one_of(earlier: list[dict], payload: dict) -> bytes:
    """An action offered in an earlier decision that is not legal now (a legal one when
    there is none, so the bot misbehaves at its first chance)."""
    legal = payload["legal_actions"]
    for old in earlier:
        for action in old["legal_actions"]:
            if action not in legal:
                return json.dumps({"action": action}).encode()
    return random_answer(payload)


class BadBots(sdk.BotServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256  # a hundred matches may call at once

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.by_match: dict[str, list[dict]] = defaultdict(list)
        self.stopping = threading.Event()
        self.gate = threading.Event()
        self.gate_reached = threading.Event()
        self._lock = threading.Lock()

    def record(self, path: str, payload: dict) -> list[dict]:
        """Keep the request; returns the match's requests before it."""
        with self._lock:
            earlier = list(self.by_match[payload["match_id"]])
            self.by_match[payload["match_id"]].append(
                {**payload, "path": path, "at": time.monotonic()})
        return earlier

    def first_at_gate(self) -> bool:
        with self._lock:
            first = not self.gate_reached.is_set()
            self.gate_reached.set()
        return first

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def start(self) -> BadBots:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.gate.set()
        self.shutdown()
        self.server_close()
