"""A random push bot that takes a fixed time per move, for the throughput benchmark.

    python3 bench/slow_bot.py --port 8001 --delay-ms 20

The SDK's random bot behind a sleep, served by the SDK's threaded server, so it serves many
concurrent decisions.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bots.python import random_bot  # noqa: E402
from bots.python.sdk import Choose, bot_arguments, serve  # noqa: E402


def slow(choose: Choose, delay_ms: float) -> Choose:
    """`choose`, answering only after `delay_ms`."""

    def slow_choose(observation: dict, legal_actions: list[dict]) -> dict:
        time.sleep(delay_ms / 1000)
        return choose(observation, legal_actions)

    return slow_choose


def main() -> None:
    parser = bot_arguments(__doc__.split("\n")[0])
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.set_defaults(seed=0)
    args = parser.parse_args()
    serve(slow(random_bot.make_choose(args.seed), args.delay_ms), args.port, args.host,
          args.verbose)


if __name__ == "__main__":
    main()
