"""Rules engines: `names()`, `get(name)` and the error hierarchy (design.md section 3).

Each game is a subpackage that exposes `GAME`, an instance of `engines.base.Game`; the
registry discovers them, so adding a game means adding its package and nothing else.
"""

import importlib
import pkgutil
from functools import cache

from .base import Game
from .errors import EngineError, IllegalAction, InvalidAction, InvalidSetup, UnknownGame
from .schema import MAX_ACTION_BYTES

__all__ = [
    "MAX_ACTION_BYTES", "EngineError", "Game", "IllegalAction", "InvalidAction", "InvalidSetup",
    "UnknownGame", "get", "names",
]


@cache
def _registry() -> dict[str, Game]:
    games = {}
    for module in pkgutil.iter_modules(__path__):
        if not module.ispkg:
            continue
        game = getattr(importlib.import_module(f"{__name__}.{module.name}"), "GAME", None)
        if isinstance(game, Game):
            games[game.name] = game
    return dict(sorted(games.items()))


def names() -> list[str]:
    """The registered game ids, sorted."""
    return list(_registry())


def get(name: str) -> Game:
    """The engine registered as `name`; raises UnknownGame."""
    try:
        return _registry()[name]
    except (KeyError, TypeError):
        raise UnknownGame(f"unknown game {name!r}; known games: {', '.join(names())}") from None
