"""Records of seeded random games, to prove an engine version keeps playing exactly as it did.

A record holds the setup, the actions, the sha256 of every state (orjson with sorted keys
of `to_json`, what a `referee-replay/1` state hash is), the result, the final state and the
observations of every viewer halfway and at the end. The records under data/ were made with
the engines before the one-vocabulary change (aladino 1.0.0, aldabas 1.1.0, caravans 2);
before the next change of a game, record its current version the same way and keep the file:

    python3 -m tests.engines.version_records   # writes data/<game>-<version>.json
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

import orjson

DATA = Path(__file__).resolve().parent / "data"
SEEDS = (7, 2**60 + 12345)
MAX_STEPS = 5000


def state_hash(game: Any, state: dict) -> str:
    return hashlib.sha256(orjson.dumps(game.to_json(state), option=orjson.OPT_SORT_KEYS)
                          ).hexdigest()


def record_game(game: Any, num_players: int, options: dict, seed: int) -> dict:
    """Play one game choosing uniformly among the legal actions (random.Random(seed))."""
    chooser = random.Random(seed)
    states = [game.new_game(num_players=num_players, seed=seed, options=options)]
    actions = []
    while not game.is_over(states[-1]):
        if len(actions) >= MAX_STEPS:
            raise RuntimeError(f"{game.name} seed {seed} did not finish")
        actions.append(chooser.choice(game.legal_actions(states[-1])))
        states.append(game.apply(states[-1], actions[-1]))
    return {
        "game": game.name,
        "version": game.version,
        "num_players": num_players,
        "options": options,
        "seed": seed,
        "actions": actions,
        "state_hashes": [state_hash(game, state) for state in states],
        "result": game.result(states[-1]),
        "final_state": game.to_json(states[-1]),
        "observations": observations(game, states),
    }


def observations(game: Any, states: list[dict]) -> list[dict]:
    """Every viewer's observation (spectator first) halfway and at the end."""
    steps = sorted({len(states) // 2, len(states) - 1})
    return [
        {"step": step, "seat": seat, "observation": game.observation(states[step], seat)}
        for step in steps
        for seat in [None, *range(game.seats(states[step]))]
    ]


def record_all(game: Any) -> list[dict]:
    return [record_game(game, variant["num_players"], variant["options"], seed)
            for variant in game.variants() for seed in SEEDS]


def path_for(name: str, version: str) -> Path:
    return DATA / f"{name}-{version}.json"


def load(name: str, version: str) -> list[dict]:
    return orjson.loads(path_for(name, version).read_bytes())


def main() -> int:
    import engines

    DATA.mkdir(exist_ok=True)
    for name in engines.names():
        game = engines.get(name)
        path_for(name, game.version).write_bytes(orjson.dumps(record_all(game)) + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
