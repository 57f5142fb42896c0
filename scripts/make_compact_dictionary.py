"""Write `referee/compact_dictionary.json`: the samples a stored record's zlib preset
dictionary is made of (`referee.match.compact`).

    python3 scripts/make_compact_dictionary.py > referee/compact_dictionary.json

Never rewrite the committed file in place: records stored with a dictionary are read with
that very dictionary (its sha256 is checked). A better dictionary is a new version: a new
file, a new magic in `referee.match.compact`, the old one kept for reading.

The samples are what the referee stores once per match, for every game and player count:
a match's meta (tournament tags included), its summary as an archived match keeps it
(result included) and its replay in the stored form (steps as columns, no state hashes),
played by random seats (of a replay, its start: header, seats, first actions).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engines  # noqa: E402
from referee import compact  # noqa: E402
from referee.match.botclient import BotReply  # noqa: E402
from referee.match.replay import utc_now  # noqa: E402
from referee.match.runner import FailurePolicy, run_match  # noqa: E402
from tournament.store import bot_seats, new_match_meta  # noqa: E402

LIMIT = 32 * 1024 - 512  # zlib's window, with room to spare
REPLAY_SAMPLE = 3000  # the start of a replay: its header, seats and first actions


class RandomSeat:
    """An in-process seat choosing uniformly, answering in a plausible time."""

    def __init__(self, rng: random.Random, bot_id: str, name: str):
        self.rng, self.bot_id, self.name, self.deadline_ms = rng, bot_id, name, 2000

    def info(self) -> dict:
        return {"kind": "bot", "bot_id": self.bot_id, "name": self.name,
                "deadline_ms": self.deadline_ms}

    async def decide(self, payload: dict) -> BotReply:
        return BotReply(action=self.rng.choice(payload["legal_actions"]), fault=None,
                        raw="", elapsed_ms=round(self.rng.uniform(0.4, 9.0), 3))

    async def aclose(self) -> None:
        """Nothing to release."""


def samples_of(game: str, variant: dict, rng: random.Random) -> tuple[bytes, bytes, bytes]:
    """(stored replay body, meta, archived summary) of one match of `variant`."""
    players = variant["num_players"]
    bots = [(f"bot-{rng.getrandbits(48):012x}", f"random {game} {seat}")
            for seat in range(players)]
    seats = [RandomSeat(rng, bot_id, name) for bot_id, name in bots]
    match_id = f"m-{rng.getrandbits(64):016x}"
    record = run_match(game, rng.getrandbits(52), variant["options"], seats,
                       FailurePolicy(), match_id, secret="sample")
    tags = {"tournament_id": f"t-{rng.getrandbits(64):016x}", "tournament_index": 12,
            "deal_siblings": [f"m-{rng.getrandbits(64):016x}" for _ in range(players - 1)]}
    meta = new_match_meta(game, record["game_version"], bot_seats(bots), record["options"],
                          record["seed"], record["policy"], 2000, 300000, match_id, **tags)
    summary = {**meta, "status": "finished", "step": len(record["steps"]), "to_move": None,
               "result": record["result"], "forfeit": None, "error": None,
               "started_at": utc_now(), "finished_at": utc_now(),
               "archive": f"{game}/2026-01/{match_id}.json.gz"}
    return compact.stored_body(record), orjson.dumps(meta), orjson.dumps(summary)


def main() -> None:
    rng = random.Random(20260101)
    replays, small = [], []
    for game in engines.names():
        for variant in engines.get(game).variants():
            body, meta, summary = samples_of(game, variant, rng)
            if variant["num_players"] == 2:
                replays.append(body[:REPLAY_SAMPLE])
            small += [meta, summary]
    samples = replays + small
    while sum(map(len, samples)) > LIMIT:
        samples.pop(0)
    sys.stdout.write(orjson.dumps({
        "about": "zlib preset dictionary of referee.match.compact; never edit (see "
                 "scripts/make_compact_dictionary.py)",
        "samples": [sample.decode() for sample in samples]}, option=orjson.OPT_INDENT_2
    ).decode() + "\n")


if __name__ == "__main__":
    main()
