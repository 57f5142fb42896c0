"""A random bot for any game: it picks uniformly among the legal actions.

    python3 -m bots.python.random_bot --port 8001 [--seed 7]
"""

from __future__ import annotations

import random

from .sdk import Choose, run_bot


def make_choose(seed: int | None = None) -> Choose:
    """A chooser with its own generator (seeded for reproducible tests)."""
    chooser = random.Random(seed)

    def choose(observation: dict, legal_actions: list[dict]) -> dict:
        return chooser.choice(legal_actions)

    return choose


if __name__ == "__main__":
    raise SystemExit(run_bot(make_choose, "a random bot for any game"))
