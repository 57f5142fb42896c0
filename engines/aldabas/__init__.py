"""Aldabas: Doors of Cartagena (2-4 players) and its solo mode Aldabas Solidad.

Public: `GAME` (the current version) and `EARLIER` (the earlier versions still played,
engines.legacy); everything else in this package is internal.
"""

from engines.legacy import EarlierVersion

from .game import AldabasGame
from .legacy import V1

GAME = AldabasGame()
EARLIER = (EarlierVersion(GAME, V1()),)

__all__ = ["EARLIER", "GAME"]
