"""Final score: 1 point per controlled city, 3 bonus points per extra map of a city type."""

from __future__ import annotations

from typing import Any

from engines.base import ranks_from_scores
from engines.types import Result, State

from .components import CITY_TYPES, TYPE_BONUS


def breakdown(state: State, seat: int) -> dict[str, Any]:
    cities = sorted(city for city, holder in state["control"].items() if holder == seat)
    maps_per_type = {t: sum(1 for c in cities if c.split(".")[1] == t) for t in CITY_TYPES}
    bonus = {t: TYPE_BONUS * (count - 1) for t, count in maps_per_type.items() if count > 1}
    return {
        "cities": cities,
        "city_points": len(cities),
        "type_bonus": bonus,
        "bonus_points": sum(bonus.values()),
        "total": len(cities) + sum(bonus.values()),
        "gold": state["gold"][seat],
    }


def result(state: State) -> Result:
    """Most points wins; a tie is shared (the rulebook has no tie-break)."""
    players = [breakdown(state, seat) for seat in range(state["num_players"])]
    scores = [p["total"] for p in players]
    return {
        "scores": scores,
        "ranks": ranks_from_scores(scores),
        "details": {"players": players, "turns": state["turn"]},
    }
