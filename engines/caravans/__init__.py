"""Caravans of Ahldarahd: build caravan routes, control cities, bid for the Shah's favour.

Public: `GAME` (the current version) and `EARLIER` (the earlier versions still played,
engines.legacy); everything else in this package is internal.
"""

from engines.legacy import EarlierVersion

from .game import CaravansGame
from .legacy import V2

GAME = CaravansGame()
EARLIER = (EarlierVersion(GAME, V2()),)

__all__ = ["EARLIER", "GAME"]
