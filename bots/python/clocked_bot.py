"""A bot that manages its clock (docs/bots.md, Clocks): on a match with a time control it
spends on each decision a twentieth of its remaining time plus most of the increment
(`sdk.budget_ms`), never more than the decision's `deadline_ms` allows, and says so in
its `info`. It listens to updates (register it with `"updates": true`) and reports how
many it heard.

The thinking here is a stand-in: the move is a random bot's, and the rest of the budget is
waited out. Put a search in `think`, stop it at `stop`, and the time management is done.

    python3 -m bots.python.clocked_bot --port 8001 [--seed 7] [--stdio]
"""

from __future__ import annotations

import random
import sys
import threading
import time

from .sdk import Answer, bot_arguments, budget_ms, serve, serve_stdio


class ClockedBot:
    """A chooser that spends its budget, and counts the updates of each match."""

    def __init__(self, seed: int | None = None):
        self.rng = random.Random(seed)
        self.heard: dict[tuple[str, int], int] = {}  # updates heard, per match and seat
        self.lock = threading.Lock()

    def choose(self, observation: dict, legal_actions: list[dict], decision: dict) -> Answer:
        started = time.monotonic()
        budget = budget_ms(decision)
        stop = started + budget / 1000
        action = self.think(observation, legal_actions, stop)
        time.sleep(max(stop - time.monotonic(), 0))
        spent = (time.monotonic() - started) * 1000
        clock = decision.get("clock")
        left = "no clock" if clock is None else (
            f"{clock['remaining_ms'][decision['seat']]:.0f} ms left")
        with self.lock:
            heard = self.heard.get((decision["match_id"], decision["seat"]), 0)
        return Answer(action, debug=f"thought {spent:.0f} ms of a {budget:.0f} ms budget ({left})",
                      info={"budget_ms": round(budget, 1), "spent_ms": round(spent, 1),
                            "updates_heard": heard})

    def think(self, observation: dict, legal_actions: list[dict], stop: float) -> dict:
        """The move, found before `stop` (monotonic seconds): here a random one."""
        return self.rng.choice(legal_actions)

    def hear(self, update: dict) -> None:
        with self.lock:
            key = (update["match_id"], update["seat"])
            self.heard[key] = self.heard.get(key, 0) + 1


def main(argv: list[str] | None = None) -> int:
    args = bot_arguments("a bot that spends a twentieth of its clock on each decision"
                         ).parse_args(sys.argv[1:] if argv is None else argv)
    bot = ClockedBot(args.seed)
    if args.stdio:
        serve_stdio(bot.choose, on_update=bot.hear)
    else:
        serve(bot.choose, args.port, args.host, args.verbose, on_update=bot.hear)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
