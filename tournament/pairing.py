"""Fixed schedules: which bots sit where in every match of a round-robin or a gauntlet, on
which seed.

Round-robin: every combination of `players` bots is played in each of its seat rotations
(the seating turned by one seat each time). Gauntlet: the same, over the combinations that
hold the challenger (the challenger and `players - 1` bots of the field). The whole schedule
is repeated `rounds` times with fresh seeds. Seeds are derived from the tournament seed by
hashing, never drawn from a global generator, so the same arguments always give the same
schedule.

Deals (`PAIRED`, the default): all rotations of one combination share one match seed, so
each bot meets the same deal from every seat; solo tournaments (`players == 1`) give every
bot the same seed in a round. `INDEPENDENT`: every match has a seed of its own.
"""

from __future__ import annotations

import hashlib
import json
from itertools import combinations
from math import comb
from typing import Any

SEED_BITS = 53  # every derived seed is an exact integer in a JSON double: 0 .. 2**53 - 1
PAIRED, INDEPENDENT = "paired", "independent"
DEALS = (PAIRED, INDEPENDENT)

Match = dict[str, Any]


def derive_seed(tournament_seed: int | str, *parts: int) -> int:
    """A 53-bit match seed from the tournament seed and the match's coordinates.

    sha256 of the canonical JSON of [tournament_seed, *parts]; the first 8 bytes, big-endian,
    keep their top 53 bits, so the seed is exact wherever JSON numbers are doubles.
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


def gauntlet_count(field: int, players: int, rounds: int) -> int:
    """How many matches `gauntlet` returns: C(field, players - 1) * players * rounds."""
    return comb(field, players - 1) * players * rounds


def schedule(
    bot_ids: list[str], players: int, rounds: int, tournament_seed: int | str,
    deals: str = PAIRED,
) -> list[Match]:
    """Every match of the round-robin, in play order.

    Each match is a JSON-able dict: `index` (0-based, over the whole tournament), `round`
    (0-based), `combination` (0-based within the round), `rotation` (how many seats the
    combination is turned), `seats` (bot ids in seat order) and `seed`.
    """
    check_arguments(bot_ids, players, rounds)
    return _rotated(list(combinations(bot_ids, players)), players, rounds, tournament_seed,
                    deals)


def gauntlet(challenger: str, field: list[str], players: int, rounds: int,
             tournament_seed: int | str, deals: str = PAIRED) -> list[Match]:
    """Every match of a gauntlet, in play order, in the shape of `schedule`: each
    combination is the challenger and `players - 1` bots of the field, in every rotation."""
    check_arguments([challenger, *field], players, rounds)
    if players < 2:
        raise ValueError("a gauntlet needs at least 2 players per match")
    groups = [(challenger, *others) for others in combinations(field, players - 1)]
    return _rotated(groups, players, rounds, tournament_seed, deals)


def _rotated(groups: list[tuple[str, ...]], players: int, rounds: int,
             tournament_seed: int | str, deals: str) -> list[Match]:
    matches: list[Match] = []
    for round_number in range(rounds):
        for combination, bots in enumerate(groups):
            for rotation, seats in enumerate(rotations(bots)):
                seed = match_seed(tournament_seed, round_number, combination, players,
                                  None if deals == PAIRED else rotation)
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
               players: int, rotation: int | None = None) -> int:
    """The seed of one combination in one round, shared by its rotations (paired deals:
    `rotation` None; solo rounds then share one seed for all bots), or of one rotation
    (independent deals)."""
    if rotation is not None:
        return derive_seed(tournament_seed, round_number, combination, rotation)
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
