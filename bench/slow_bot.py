"""A random push bot that takes a fixed time per move, for the throughput benchmark.

    python3 bench/slow_bot.py --port 8001 --delay-ms 20 [--log FILE]

The SDK's random bot behind a sleep, served by the SDK's threaded server, so it serves many
concurrent decisions. `--log FILE` appends `match_id step` to FILE for every decision it is
asked, as it arrives (to count decisions asked twice).
"""

from __future__ import annotations

import io
import json
import sys
import threading
import time
from pathlib import Path

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


def main() -> None:
    parser = bot_arguments(__doc__.split("\n")[0])
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--log", type=Path, help="append `match_id step` per decision here")
    parser.set_defaults(seed=0)
    args = parser.parse_args()
    handler = handler_for(slow(random_bot.make_choose(args.seed), args.delay_ms),
                          args.verbose, "", None)
    if args.log:
        handler = logging(handler, args.log)
    BotServer((args.host, args.port), handler).serve_forever()


if __name__ == "__main__":
    main()
