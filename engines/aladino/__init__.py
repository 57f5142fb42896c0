"""Aladino y la cueva de las maravillas (2-4 players)."""

from .game import AladinoGame

GAME = AladinoGame()
