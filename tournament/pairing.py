"""Round-robin schedules: which bots sit where in every match of a tournament, on which seed.

Every combination of `players` bots is played in each of its seat rotations (the seating
turned by one seat each time), all rotations of one combination on the same match seed, so
each bot meets the same deal from every seat. The whole schedule is repeated `rounds`
times with fresh seeds. Seeds are derived from the tournament seed by hashing, never drawn
from a global generator, so the same arguments always give the same schedule.

Solo tournaments (`players == 1`) give every bot the same seed in a round: the bots are
ranked on identical deals.
"""

from __future__ import annotations

import hashlib
import json
from itertools import combinations
from math import comb
from typing import Any

SEED_BITS = 63

Match = dict[str, Any]


def derive_seed(tournament_seed: int | str, *parts: int) -> int:
    """A 63-bit match seed from the tournament seed and the match's coordinates.

    sha256 of the canonical JSON of [tournament_seed, *parts]; the first 8 bytes, big-endian,
    keep 63 bits so the seed is a non-negative signed 64-bit integer everywhere.
    """
    text = json.dumps([tournament_seed, *parts], separators=(",", ":"))
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def rotations(seats: tuple[str, ...]) -> list[list[str]]:
    """The seatings of one combination, each turned by one seat from the previous one."""
    return [list(seats[turn:] + seats[:turn]) for turn in range(len(seats))]


def match_count(num_bots: int, players: int, rounds: int) -> int:
    """How many matches `schedule` returns: C(num_bots, players) * players * rounds."""
    return comb(num_bots, players) * players * rounds


def schedule(
    bot_ids: list[str], players: int, rounds: int, tournament_seed: int | str
) -> list[Match]:
    """Every match of the round-robin, in play order.

    Each match is a JSON-able dict: `index` (0-based, over the whole tournament), `round`
    (0-based), `combination` (0-based within the round), `rotation` (how many seats the
    combination is turned), `seats` (bot ids in seat order) and `seed`.
    """
    check_arguments(bot_ids, players, rounds)
    matches: list[Match] = []
    for round_number in range(rounds):
        for combination, bots in enumerate(combinations(bot_ids, players)):
            seed = match_seed(tournament_seed, round_number, combination, players)
            for rotation, seats in enumerate(rotations(bots)):
                matches.append({
                    "index": len(matches),
                    "round": round_number,
                    "combination": combination,
                    "rotation": rotation,
                    "seats": seats,
                    "seed": seed,
                })
    return matches


def match_seed(tournament_seed: int | str, round_number: int, combination: int,
               players: int) -> int:
    """The seed of one combination in one round; solo rounds share one seed for all bots."""
    if players == 1:
        return derive_seed(tournament_seed, round_number)
    return derive_seed(tournament_seed, round_number, combination)


def check_arguments(bot_ids: list[str], players: int, rounds: int) -> None:
    """Refuse schedules that cannot be built, with a reason a tournament organiser can read."""
    if len(set(bot_ids)) != len(bot_ids):
        raise ValueError("every bot may enter a tournament only once")
    if not isinstance(players, int) or players < 1:
        raise ValueError("players per match must be a positive integer")
    if len(bot_ids) < players:
        raise ValueError(f"{players} players per match need at least {players} bots, "
                         f"got {len(bot_ids)}")
    if not isinstance(rounds, int) or rounds < 1:
        raise ValueError("rounds must be a positive integer")
