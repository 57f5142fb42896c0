"""A tiny SDK for push bots (design.md section 4): write `choose`, call `serve`.

    from bots.python.sdk import serve

    def choose(observation, legal_actions):
        return legal_actions[0]

    serve(choose, port=8001)

The referee POSTs {"protocol": "referee/1", "match_id", "game", "seat", "step",
"deadline_ms", "observation", "legal_actions"} and expects 200 {"action": {...}}.
Replies go out in one write with TCP_NODELAY: written in two pieces on a kept-alive
connection, Nagle's algorithm and delayed ACKs add about 40 ms to every decision.
Standard library only, so a bot needs nothing installed.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PROTOCOL = "referee/1"
Choose = Callable[[dict, list[dict]], dict]


class BadRequest(ValueError):
    """The request is not a referee/1 decision."""


def parse_decision(body: bytes) -> dict[str, Any]:
    """The decision payload of a request body, or BadRequest saying what is wrong."""
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadRequest(f"the body is not JSON: {error}") from None
    if not isinstance(payload, dict):
        raise BadRequest("the body must be a JSON object")
    if payload.get("protocol") != PROTOCOL:
        raise BadRequest(f'expected "protocol": "{PROTOCOL}", got {payload.get("protocol")!r}')
    if not isinstance(payload.get("legal_actions"), list) or not payload["legal_actions"]:
        raise BadRequest('"legal_actions" must be a non-empty list')
    if not isinstance(payload.get("observation"), dict):
        raise BadRequest('"observation" must be an object')
    return payload


def handler_for(choose: Choose, verbose: bool = False) -> type[BaseHTTPRequestHandler]:
    """A request handler class that answers every POST with `choose`'s action."""

    class DecisionHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the referee reuses its connection
        disable_nagle_algorithm = True  # TCP_NODELAY
        wbufsize = 1 << 16  # buffer the headers and body, flushed in one write

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                payload = parse_decision(self.rfile.read(length))
            except BadRequest as error:
                self.reply(400, {"error": str(error)})
                return
            try:
                action = choose(payload["observation"], payload["legal_actions"])
            except Exception as error:  # the bot's own bug: say so instead of hanging up
                traceback.print_exc()
                self.reply(500, {"error": f"choose() raised {error!r}"})
                return
            self.reply(200, {"action": action})

        def reply(self, status: int, body: dict) -> None:
            data = json.dumps(body, separators=(",", ":")).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            if verbose:
                super().log_message(format, *args)

    return DecisionHandler


def make_server(choose: Choose, port: int = 0, host: str = "127.0.0.1",
                verbose: bool = False) -> ThreadingHTTPServer:
    """A bound, not yet serving, server (port 0 picks a free one: see `server_address`)."""
    server = ThreadingHTTPServer((host, port), handler_for(choose, verbose))
    server.daemon_threads = True
    return server


def serve(choose: Choose, port: int = 8001, host: str = "127.0.0.1",
          verbose: bool = False) -> None:
    """Answer the referee's decisions with `choose` until interrupted."""
    server = make_server(choose, port, host, verbose)
    print(f"bot listening on http://{host}:{server.server_address[1]}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def bot_arguments(description: str) -> argparse.ArgumentParser:
    """The command line every example bot shares: --host, --port, --seed, --verbose."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--seed", type=int, default=None, help="seed of the bot's own choices")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    return parser


def run_bot(make_choose: Callable[[int | None], Choose], description: str,
            argv: list[str] | None = None) -> int:
    """Parse the shared command line and serve the bot that `make_choose(seed)` builds."""
    args = bot_arguments(description).parse_args(sys.argv[1:] if argv is None else argv)
    serve(make_choose(args.seed), args.port, args.host, args.verbose)
    return 0
