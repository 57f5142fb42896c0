"""The reward of each seat at the end of a game, for OpenSpiel's returns and PettingZoo's
rewards (issue 30), from `game.result(state)`.

With several seats: (seats ranked below - seats ranked above) / (seats - 1), from the
result's ranks (rank 1 best, ties shared): +1 alone first, -1 alone last, evenly spread
between, 0 for a tie of everyone; the rewards always sum to 0. With one seat (Aldabas
Solidad, whose result is a score): the score as a share of the score of the rulebook's best
band, at most 1 (rulebook "Solo Scoring": from 50 points "Cartagena flourishes").
"""

from __future__ import annotations

from .aldabas.scoring import SOLO_BANDS
from .base import Game
from .types import State

SOLO_TARGET = {"aldabas": SOLO_BANDS[-1][0]}
"""Per game with a solo mode, the score that earns its best outcome."""


def rewards(game: Game, state: State) -> list[float]:
    """Each seat's reward once the game is over (IllegalAction before)."""
    result = game.result(state)
    ranks = result["ranks"]
    if len(ranks) == 1:
        target = SOLO_TARGET[game.name]
        return [min(result["scores"][0], target) / target]
    return [(sum(other > rank for other in ranks) - sum(other < rank for other in ranks))
            / (len(ranks) - 1) for rank in ranks]


def bounds(seats: int) -> tuple[float, float]:
    """The lowest and highest reward of a game of `seats` seats."""
    return (0.0, 1.0) if seats == 1 else (-1.0, 1.0)
