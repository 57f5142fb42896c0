"""A random push bot that takes a fixed time per move, for the benchmarks.

    python3 bench/slow_bot.py --port 8001 --delay-ms 20 [--log FILE | --lean]

The SDK's random bot behind a sleep, served by the SDK's threaded server, so it serves many
concurrent decisions. `--log FILE` appends `match_id step` to FILE for every decision it is
asked, as it arrives (to count decisions asked twice).

`--lean` serves the same choices on one asyncio thread instead (a protocol a connection,
`httptools` and `orjson`, each answer a timer), for a benchmark of the referee's own CPU:
the threaded server spends ~0.5 ms of CPU a decision (a thread a connection, http.server's
parsing), as much as the worker it answers, and on a 2-core machine that competes with the
workers measured, where real bots would run on machines of their own; lean, ~0.17 ms
(docs/performance.md §10).
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
import threading
import time
from pathlib import Path

import httptools
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots.python import random_bot  # noqa: E402
from bots.python.sdk import BotServer, Choose, bot_arguments, handler_for  # noqa: E402


def slow(choose: Choose, delay_ms: float) -> Choose:
    """`choose`, answering only after `delay_ms`."""

    def slow_choose(observation: dict, legal_actions: list[dict]) -> dict:
        time.sleep(delay_ms / 1000)
        return choose(observation, legal_actions)

    return slow_choose


def logging(handler: type, log: Path) -> type:
    """The SDK's handler, first appending the decision's match id and step to `log`."""
    lock = threading.Lock()

    class Logging(handler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            message = json.loads(body or b"{}")
            if message.get("type", "decision") == "decision":
                with lock, log.open("a") as out:
                    out.write(f"{message.get('match_id')} {message.get('step')}\n")
            kept, self.rfile = self.rfile, io.BytesIO(body)
            try:
                super().do_POST()
            finally:
                self.rfile = kept

    return Logging


class LeanBot(asyncio.Protocol):
    """One connection of the lean server: each decision answered `delay_s` after it is
    whole, anything else (a result, an update, a notice) at once with `{}`."""

    def __init__(self, choose: Choose, delay_s: float):
        self.choose, self.delay_s = choose, delay_s
        self.parser = httptools.HttpRequestParser(self)
        self.body: list[bytes] = []
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:  # the parser is spent: so is the connection
            self._reply(b'{"error": "not HTTP/1.1"}', status=b"400 Bad Request")
            if self.transport is not None:
                self.transport.close()

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        body, self.body = b"".join(self.body), []
        try:
            message = orjson.loads(body)
            if message.get("type", "decision") != "decision":
                self._reply(b"{}")
                return
            answer = orjson.dumps({"action": self.choose(message["observation"],
                                                         message["legal_actions"])})
        except (orjson.JSONDecodeError, AttributeError, KeyError, IndexError, TypeError):
            self._reply(b'{"error": "not a decision"}', status=b"400 Bad Request")
            return
        asyncio.get_running_loop().call_later(self.delay_s, self._reply, answer)

    def _reply(self, body: bytes, status: bytes = b"200 OK") -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"HTTP/1.1 %s\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: %d\r\n\r\n%s" % (status, len(body), body))


async def serve_lean(host: str, port: int, choose: Choose, delay_ms: float) -> None:
    server = await asyncio.get_running_loop().create_server(
        lambda: LeanBot(choose, delay_ms / 1000), host, port, backlog=1024)
    await server.serve_forever()


def main() -> None:
    parser = bot_arguments(__doc__.split("\n")[0])
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--log", type=Path, help="append `match_id step` per decision here")
    parser.add_argument("--lean", action="store_true",
                        help="serve on one asyncio thread (a benchmark of the referee's CPU)")
    parser.set_defaults(seed=0)
    args = parser.parse_args()
    if args.lean:
        if args.log:
            parser.error("--log is the threaded server's: not with --lean")
        asyncio.run(serve_lean(args.host, args.port, random_bot.make_choose(args.seed),
                               args.delay_ms))
        return
    handler = handler_for(slow(random_bot.make_choose(args.seed), args.delay_ms),
                          args.verbose, "", None)
    if args.log:
        handler = logging(handler, args.log)
    BotServer((args.host, args.port), handler).serve_forever()


if __name__ == "__main__":
    main()
