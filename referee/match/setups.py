"""The options a match is played with, for every way of starting one (`referee play`,
`POST /matches`, a tournament).

The caller's options are the game's when they fit the player count. When they do not and
the game has exactly one setup for that many players, that setup's options fill in what
the caller left out: one player of Aldabas is its solo mode (`{"mode": "solo"}`), as a
bot author starting a one-bot Aldabas match expects. Otherwise the refusal lists every
setup the game has.
"""

from __future__ import annotations

import json

import engines


def match_options(engine: engines.Game, num_players: int, options: dict) -> dict:
    """The game's normalised options for `num_players`; InvalidSetup naming the setups."""
    try:
        return engine.normalize_options(num_players, dict(options))
    except engines.InvalidSetup as error:
        refused = error
    fitting = [v["options"] for v in engine.variants() if v["num_players"] == num_players]
    if len(fitting) == 1:
        try:
            return engine.normalize_options(num_players, {**fitting[0], **options})
        except engines.InvalidSetup:
            pass
    if not any(variant["options"] for variant in engine.variants()):
        raise refused
    raise engines.InvalidSetup(f"{refused.reason} (its setups: {setups_text(engine)})")


def setups_text(engine: engines.Game) -> str:
    """Every setup of the game in words, e.g. '2 to 4 players with options {"mode":
    "multi"}, or 1 player with options {"mode": "solo"}'."""
    counts: dict[str, list[int]] = {}
    for variant in engine.variants():
        key = json.dumps(variant["options"], sort_keys=True)
        counts.setdefault(key, []).append(variant["num_players"])
    parts = []
    for options, players in counts.items():
        low, high = min(players), max(players)
        who = f"{low} player{'s' if high > 1 else ''}" if low == high else (
            f"{low} to {high} players")
        parts.append(who if options == "{}" else f"{who} with options {options}")
    return ", or ".join(parts)
