"""Serving a bound server (an SDK bot, the Flask app under werkzeug) in a thread for a block."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def serving(server: socketserver.BaseServer) -> Iterator[int]:
    """Run a bound server's serve_forever in a thread until the block ends; yields its port."""
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
