"""Aladino y la cueva de las maravillas (2-4 players).

Public: `GAME` (the current version) and `EARLIER` (the earlier versions still played,
engines.legacy); everything else in this package is internal.
"""

from engines.legacy import EarlierVersion

from .game import AladinoGame
from .legacy import V1

GAME = AladinoGame()
EARLIER = (EarlierVersion(GAME, V1()),)

__all__ = ["EARLIER", "GAME"]
