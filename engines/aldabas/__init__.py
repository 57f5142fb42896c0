"""Aldabas: Doors of Cartagena (2-4 players) and its solo mode Aldabas Solidad."""

from .game import AldabasGame

GAME = AldabasGame()

__all__ = ["GAME", "AldabasGame"]
