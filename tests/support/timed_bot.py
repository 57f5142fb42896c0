"""A push bot on its own event loop thread that answers each decision after a chosen time:
`deadline_ms - margin_ms` from when the request arrived (a bot that uses its clock to the
last safe moment), or a fixed delay. Single-threaded asyncio, so hundreds of matches at once
cost it timers, not threads. Records every decision it was sent (`decisions`)."""

from __future__ import annotations

import argparse
import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import httptools
import orjson


class _Request:
    def __init__(self) -> None:
        self.parser = httptools.HttpRequestParser(self)
        self.body = b""
        self.done = False

    def on_body(self, body: bytes) -> None:
        self.body += body

    def on_message_complete(self) -> None:
        self.done = True


class TimedBot:
    """Answers the first legal action after `delay(payload)` seconds from the request's
    arrival; result notices are answered at once."""

    def __init__(self, margin_ms: float | None = 50, fixed_ms: float | None = None):
        self.margin_ms, self.fixed_ms = margin_ms, fixed_ms
        self.decisions: list[dict] = []
        self.port = 0
        self.loop = asyncio.new_event_loop()

    def delay_s(self, payload: dict) -> float:
        if self.fixed_ms is not None:
            return self.fixed_ms / 1000
        return max(payload["deadline_ms"] - (self.margin_ms or 0), 0) / 1000

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = _Request()
                while not request.done:
                    data = await reader.read(65536)
                    if not data:
                        return
                    arrived = time.monotonic()
                    request.parser.feed_data(data)
                payload = orjson.loads(request.body)
                answer = b"{}"
                if payload.get("type") == "decision":
                    self.decisions.append(payload)
                    await asyncio.sleep(max(self.delay_s(payload) - (time.monotonic() - arrived),
                                            0))
                    answer = orjson.dumps({"action": payload["legal_actions"][0]})
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(answer), answer))
        except (ConnectionError, httptools.HttpParserError):
            return
        finally:
            writer.close()

    @contextmanager
    def running(self) -> Iterator[str]:
        """Serve on a free loopback port for the block; yields the bot's URL."""
        started = threading.Event()

        async def start() -> asyncio.Server:
            server = await asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=1024)
            self.port = server.sockets[0].getsockname()[1]
            return server

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.server = self.loop.run_until_complete(start())
            started.set()
            self.loop.run_forever()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        started.wait(10)
        try:
            yield f"http://127.0.0.1:{self.port}/"
        finally:
            asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(10)
            self.loop.call_soon_threadsafe(self.loop.stop)
            thread.join(10)
            self.loop.close()

    async def _stop(self) -> None:
        """Close the server and end every connection's task (none left on a closed loop)."""
        self.server.close()
        tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def main() -> None:
    """`python -m tests.support.timed_bot --port P [--margin-ms M | --fixed-ms F] [--log F]`:
    the bot in a process of its own (a test's own threads then cannot delay it), each
    decision written to `--log` as a JSON line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--margin-ms", type=float, default=50)
    parser.add_argument("--fixed-ms", type=float)
    parser.add_argument("--log", type=Path)
    args = parser.parse_args()
    bot = TimedBot(args.margin_ms, args.fixed_ms)
    log = args.log.open("ab", buffering=0) if args.log else None
    if log is not None:
        bot.decisions = _Appender(log)  # type: ignore[assignment]

    async def serve() -> None:
        server = await asyncio.start_server(bot._serve, "127.0.0.1", args.port, backlog=1024)
        async with server:
            await server.serve_forever()

    asyncio.run(serve())


class _Appender(list):
    """A list of decisions that writes each one to a file as it comes."""

    def __init__(self, file: BinaryIO):
        super().__init__()
        self.file = file

    def append(self, decision: dict) -> None:
        self.file.write(orjson.dumps(decision) + b"\n")


if __name__ == "__main__":
    main()
