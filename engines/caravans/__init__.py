"""Caravans of Ahldarahd: build caravan routes, control cities, bid for the Shah's favour."""

from .game import CaravansGame

GAME = CaravansGame()

__all__ = ["GAME", "CaravansGame"]
