"""A random push bot that takes a fixed time per move, for the throughput benchmark.

    python3 bench/slow_bot.py --port 8001 --delay-ms 20

Built on the Python SDK's threaded server, so it serves many concurrent decisions.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots.python.sdk import make_server  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--delay-ms", type=float, default=20.0)
    args = parser.parse_args()
    chooser = random.Random(0)

    def choose(observation: dict, legal_actions: list[dict]) -> dict:
        time.sleep(args.delay_ms / 1000)
        return chooser.choice(legal_actions)

    server = make_server(choose, args.port)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
