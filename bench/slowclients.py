"""Slow HTTP clients (slowloris) against a server on loopback, and the latency of
`GET /health` meanwhile; used by `bench/slowloris.py` and by the hardening test.

`SlowClients` keeps `count` sockets open, each sending its request a little at a time: in
`headers` mode the request line, then one header line every `interval_s` (the head never
ends); in `body` mode a whole head announcing a body, then one body byte every
`interval_s`. A socket the server closes is replaced at once, as an attacker would, so
`count` sockets are open the whole time. Everything is bounded: it stops when told, and
sends only to the host and port it was given.
"""

from __future__ import annotations

import http.client
import selectors
import socket
import threading
import time
from collections import Counter

BODY_BYTES = 100_000  # announced by each slow body: under the API's 1 MiB limit


class SlowClients:
    """`count` slow requests kept open against host:port in a background thread."""

    def __init__(self, host: str, port: int, count: int = 200, mode: str = "headers",
                 interval_s: float = 5.0):
        self.address = (host, port)
        self.count = count
        self.mode = mode
        self.interval_s = interval_s
        self.opened = 0
        self.closed_by_server = 0
        self.answers: Counter[str] = Counter()
        self.lifetimes: list[float] = []
        self._selector = selectors.DefaultSelector()
        self._due: dict[socket.socket, float] = {}
        self._born: dict[socket.socket, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> SlowClients:
        for _ in range(self.count):
            self._open()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        for sock in list(self._due):
            self._forget(sock)
        self._selector.close()

    def __enter__(self) -> SlowClients:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _open(self) -> None:
        sock = socket.create_connection(self.address, timeout=5)
        sock.setblocking(False)
        sock.sendall(self._head())
        now = time.monotonic()
        self._due[sock] = now + self.interval_s
        self._born[sock] = now
        self._selector.register(sock, selectors.EVENT_READ)
        self.opened += 1

    def _head(self) -> bytes:
        host = f"Host: {self.address[0]}:{self.address[1]}\r\n"
        if self.mode == "headers":
            return f"GET /health HTTP/1.1\r\n{host}".encode()
        return (f"POST /replays/verify HTTP/1.1\r\n{host}Content-Type: application/json\r\n"
                f"Content-Length: {BODY_BYTES}\r\n\r\n[").encode()

    def _trickle(self, sock: socket.socket) -> None:
        sock.send(b"X-Slow: 1\r\n" if self.mode == "headers" else b" ")

    def _run(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic()
            for sock, due in list(self._due.items()):
                if due <= now:
                    self._due[sock] = now + self.interval_s
                    try:
                        self._trickle(sock)
                    except OSError:
                        self._replace(sock)
            for key, _ in self._selector.select(timeout=0.1):
                self._read(key.fileobj)

    def _read(self, sock: socket.socket) -> None:
        try:
            data = sock.recv(65536)
        except OSError:
            data = b""
        if data.startswith(b"HTTP/"):
            self.answers[data.split(b"\r\n", 1)[0].decode(errors="replace")] += 1
        if not data or data.startswith(b"HTTP/"):
            self._replace(sock)

    def _replace(self, sock: socket.socket) -> None:
        self.closed_by_server += 1
        self.lifetimes.append(time.monotonic() - self._born[sock])
        self._forget(sock)
        if not self._stop.is_set():
            self._open()

    def _forget(self, sock: socket.socket) -> None:
        self._selector.unregister(sock)
        del self._due[sock], self._born[sock]
        sock.close()


def health_latencies(host: str, port: int, requests: int, spacing_s: float,
                     timeout_s: float = 10.0) -> list[float | None]:
    """`GET /health` `requests` times, each on a new connection, `spacing_s` apart: the
    seconds each took to answer 200, or None for a request that failed or timed out."""
    latencies: list[float | None] = []
    for _ in range(requests):
        started = time.perf_counter()
        connection = http.client.HTTPConnection(host, port, timeout=timeout_s)
        try:
            connection.request("GET", "/health")
            answer = connection.getresponse()
            answer.read()
            ok = answer.status == 200
        except OSError:
            ok = False
        finally:
            connection.close()
        latencies.append(time.perf_counter() - started if ok else None)
        time.sleep(spacing_s)
    return latencies
