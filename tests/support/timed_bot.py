"""A push bot on its own event loop thread that answers each decision after a chosen time:
`deadline_ms - margin_ms` from when the request arrived, as the kernel dated it (a bot that
uses its clock to the last safe moment), or a fixed delay. Single-threaded asyncio, so
hundreds of matches at once cost it timers, not threads. Records every decision it was
sent (`decisions`)."""

from __future__ import annotations

import argparse
import asyncio
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

import httptools
import orjson

from referee.match.botclient import realtime_offset_ns
from referee.redis_server import free_port, wait_for_port
from tests.support.apitest import ROOT


class _Request:
    def __init__(self) -> None:
        self.parser = httptools.HttpRequestParser(self)
        self.body = b""
        self.done = False

    def on_body(self, body: bytes) -> None:
        self.body += body

    def on_message_complete(self) -> None:
        self.done = True


SO_TIMESTAMPNS = 35  # Linux's, which the socket module does not name
_TIMESPEC = struct.Struct("@qq")


async def _read(sock: socket.socket, offsets: list[int]) -> tuple[bytes, float]:
    """The next chunk on `sock` and when the kernel received it (time.monotonic's clock),
    converted with the larger of the clocks' offsets at the last read (`offsets`, kept) and
    now: a step of CLOCK_REALTIME between the two dates the request early, so the bot
    answers early, never late."""
    loop = asyncio.get_running_loop()
    while True:
        try:
            data, ancillary, _, _ = sock.recvmsg(65536, socket.CMSG_SPACE(_TIMESPEC.size),
                                                 socket.MSG_DONTWAIT)
        except BlockingIOError:
            ready = loop.create_future()
            loop.add_reader(sock.fileno(), ready.set_result, None)
            try:
                await ready
            finally:
                loop.remove_reader(sock.fileno())
            continue
        for level, kind, value in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                seconds, nanos = _TIMESPEC.unpack_from(value)
                now_ns, offset_ns = realtime_offset_ns()  # as the referee converts it
                offsets[0], offset_ns = offset_ns, max(offset_ns, offsets[0] or offset_ns)
                return data, min(seconds + nanos / 1e9 - offset_ns / 1e9, now_ns / 1e9)
        return data, time.monotonic()


class TimedBot:
    """Answers the first legal action after `delay(payload)` seconds from the request's
    arrival; result notices are answered at once."""

    def __init__(self, margin_ms: float | None = 50, fixed_ms: float | None = None,
                 fraction: float | None = None):
        self.margin_ms, self.fixed_ms, self.fraction = margin_ms, fixed_ms, fraction
        self.decisions: list[dict] = []
        self.port = 0
        self.loop = asyncio.new_event_loop()

    def delay_s(self, payload: dict) -> float:
        if self.fixed_ms is not None:
            return self.fixed_ms / 1000
        if self.fraction is not None:
            return payload["deadline_ms"] * self.fraction / 1000
        return max(payload["deadline_ms"] - (self.margin_ms or 0), 0) / 1000

    async def serve(self, listener: socket.socket) -> None:
        """Accept connections on `listener` until cancelled."""
        loop = asyncio.get_running_loop()
        listener.setblocking(False)
        connections: set[asyncio.Task] = set()
        try:
            while True:
                connection, _ = await loop.sock_accept(listener)
                task = loop.create_task(self._serve(connection))
                connections.add(task)
                task.add_done_callback(connections.discard)
        finally:
            for task in list(connections):
                task.cancel()
            await asyncio.gather(*connections, return_exceptions=True)
            listener.close()

    async def _serve(self, connection: socket.socket) -> None:
        """One connection: each request timed from when the kernel received it (its
        SO_TIMESTAMPNS), so a late read here does not make the answer late."""
        loop = asyncio.get_running_loop()
        connection.setblocking(False)
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        offsets = [0]
        try:
            while True:
                request, arrived = _Request(), 0.0
                while not request.done:
                    data, stamp = await _read(connection, offsets)
                    if not data:
                        return
                    arrived = arrived or stamp
                    request.parser.feed_data(data)
                payload = orjson.loads(request.body)
                answer = b"{}"
                if payload.get("type") == "decision":
                    await asyncio.sleep(max(self.delay_s(payload) - (time.monotonic() - arrived),
                                            0))
                    answer = orjson.dumps({"action": payload["legal_actions"][0]})
                answering, sent = time.monotonic(), None
                try:
                    await loop.sock_sendall(connection, b"HTTP/1.1 200 OK\r\nContent-Type: "
                                            b"application/json\r\nContent-Length: %d\r\n\r\n"
                                            b"%s" % (len(answer), answer))
                    sent = time.monotonic() * 1000
                finally:
                    if payload.get("type") == "decision":  # logged, sent or not (too late)
                        self.decisions.append({**payload, "bot_ms": {  # its view of its time
                            "arrived": arrived * 1000, "answered": answering * 1000,
                            "sent": sent}})
        except (ConnectionError, httptools.HttpParserError):
            return
        finally:
            connection.close()

    @contextmanager
    def running(self) -> Iterator[str]:
        """Serve on a free loopback port for the block, on a thread; yields the bot's URL."""
        listener = socket.create_server(("127.0.0.1", 0), backlog=1024)
        self.port = listener.getsockname()[1]
        serving = self.loop.create_task(self.serve(listener))
        def run() -> None:
            with suppress(asyncio.CancelledError):
                self.loop.run_until_complete(serving)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{self.port}/"
        finally:
            self.loop.call_soon_threadsafe(serving.cancel)
            thread.join(10)
            self.loop.close()


@contextmanager
def bot_process(folder: Path, *args: str) -> Iterator[tuple[str, Path]]:
    """The bot in a process of its own (`main`'s arguments): a test's own threads, and its
    process's garbage collections, then cannot delay its answers; (its URL, its decisions'
    log, read with `logged_decisions`)."""
    folder.mkdir(parents=True, exist_ok=True)
    port, log = free_port(), folder / "decisions.jsonl"
    process = subprocess.Popen([sys.executable, "-m", "tests.support.timed_bot", "--port",
                                str(port), "--log", str(log), *args], cwd=ROOT)
    try:
        wait_for_port(port, timeout=30)
        yield f"http://127.0.0.1:{port}/", log
    finally:
        process.kill()
        process.wait(10)


def logged_decisions(log: Path) -> list[dict]:
    """The decisions a `bot_process` was sent, in order."""
    return [orjson.loads(line) for line in log.read_bytes().splitlines()]


def main() -> None:
    """`python -m tests.support.timed_bot --port P [--margin-ms M | --fixed-ms F | --fraction
    R] [--log F]`:
    the bot in a process of its own (a test's own threads then cannot delay it), each
    decision written to `--log` as a JSON line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--margin-ms", type=float, default=50)
    parser.add_argument("--fixed-ms", type=float)
    parser.add_argument("--fraction", type=float, help="answer after this share of deadline_ms")
    parser.add_argument("--log", type=Path)
    args = parser.parse_args()
    bot = TimedBot(args.margin_ms, args.fixed_ms, args.fraction)
    log = args.log.open("ab", buffering=0) if args.log else None
    if log is not None:
        bot.decisions = _Appender(log)  # type: ignore[assignment]

    listener = socket.create_server(("127.0.0.1", args.port), backlog=1024)
    asyncio.run(bot.serve(listener))


class _Appender(list):
    """A list of decisions that writes each one to a file as it comes."""

    def __init__(self, file: BinaryIO):
        super().__init__()
        self.file = file

    def append(self, decision: dict) -> None:
        self.file.write(orjson.dumps(decision) + b"\n")


if __name__ == "__main__":
    main()
