"""A bot that answers each request with bytes that never stop, in a process of its own (so
the test's event loop shares no GIL with it): `python -m tests.support.floodbot --port P
--kind K`.

| kind | what it sends after the request, until the referee closes the connection |
| --- | --- |
| `continue` | `HTTP/1.1 100 Continue` answers, one after the other |
| `header` | `HTTP/1.1 200 OK` and one header line whose value never ends |
| `extension` | a chunked `200` whose first chunk size carries an extension that never ends |
| `body` | a chunked `200` with endless chunks of one byte each (framing outweighs body) |
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from referee.redis_server import free_port, wait_for_port
from tests.support.apitest import ROOT

STARTS = {
    "continue": b"",
    "header": b"HTTP/1.1 200 OK\r\nX-Endless: ",
    "extension": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;x=",
    "body": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
}
PIECES = {
    "continue": b"HTTP/1.1 100 Continue\r\n\r\n" * 1000,
    "header": b"a" * 65536,
    "extension": b"b" * 65536,
    "body": b"1\r\n{\r\n" * 8192,
}


@contextmanager
def flood_bot(kind: str) -> Iterator[str]:
    """The bot's URL while its process runs."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "tests.support.floodbot", "--port",
                                str(port), "--kind", kind], cwd=ROOT)
    try:
        wait_for_port(port, timeout=30)
        yield f"http://127.0.0.1:{port}/"
    finally:
        process.kill()
        process.wait(10)


def _flood(connection: socket.socket, kind: str) -> None:
    with connection:
        request = b""
        while b"\r\n\r\n" not in request:  # the head; the body is never read
            if not (data := connection.recv(65536)):
                return
            request += data
        try:
            connection.sendall(STARTS[kind])
            while True:
                connection.sendall(PIECES[kind])
        except OSError:  # the referee gave up on the answer and closed the connection
            return


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--kind", choices=sorted(STARTS), required=True)
    args = parser.parse_args()
    listener = socket.create_server(("127.0.0.1", args.port))
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=_flood, args=(connection, args.kind), daemon=True).start()


if __name__ == "__main__":
    main()
