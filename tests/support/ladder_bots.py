"""Aladino bots of known strength for the ladder tests, all on one loopback server, the URL
path picking the bot:

- `/p/{k}`: the greedy bot's move (`bots.python.aladino_bot`) with probability k/7, else a
  random legal move (drawn from the match id, step and path: deterministic);
- `/crashy`: as `/p/7` until `crashing` is set, then an HTTP 500 every third decision;
- `/garbage`: a body that is not JSON.

Every POST is recorded by path (`received`), result notices and ladder notices included.
"""

from __future__ import annotations

import json
import random
import threading
from collections import defaultdict
from http.server import BaseHTTPRequestHandler

from bots.python import aladino_bot, sdk

STRENGTHS = 8  # paths /p/0 ... /p/7
_greedy = aladino_bot.make_choose(0)


def _action(path: str, payload: dict, strength: float) -> dict:
    legal = payload["legal_actions"]
    draw = random.Random(f"{payload['match_id']}/{payload['step']}/{path}")
    if draw.random() < strength:
        return _greedy(payload["observation"], legal)
    return draw.choice(legal)


class _Handler(BaseHTTPRequestHandler):
    server: LadderBots
    protocol_version = "HTTP/1.1"
    # the reply in one write, sent at once (as bots.python.sdk's): written as head and body
    # on a kept-alive connection, Nagle held the body for the referee's delayed ACK, ~20 ms
    # a decision
    disable_nagle_algorithm = True
    wbufsize = 1 << 16

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        payload = json.loads(body)
        calls = self.server.record(self.path, payload)
        if "legal_actions" not in payload:  # a notice, an update
            self._send(200, b"{}")
        elif self.path == "/garbage":
            self._send(200, b"<html>not json</html>")
        elif self.path == "/crashy" and self.server.crashing.is_set() and calls % 3 == 0:
            self._send(500, b"crashed")
        else:
            strength = 1.0 if self.path == "/crashy" else int(self.path.rsplit("/", 1)[1]) / 7
            self._send(200, json.dumps({"action": _action(self.path, payload, strength)})
                       .encode())

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        """Quiet."""


class LadderBots(sdk.BotServer):
    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.received: dict[str, list[dict]] = defaultdict(list)
        self.crashing = threading.Event()
        self._lock = threading.Lock()

    def record(self, path: str, payload: dict) -> int:
        """Keep the request; how many the path received."""
        with self._lock:
            self.received[path].append(payload)
            return len(self.received[path])

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def start(self) -> LadderBots:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self
