"""Rules engines: `names()`, `get(name, version=None)`, `versions(name)` and the error
hierarchy (design.md section 3).

Each game is a subpackage that exposes `GAME`, its current version (a `Game`), and
`EARLIER`, the earlier versions it still plays (engines.legacy); the registry discovers
them, so adding a game means adding its package and nothing else.
"""

import importlib
import pkgutil
from functools import cache

from .base import Game
from .errors import (
    EngineError,
    IllegalAction,
    InvalidAction,
    InvalidSetup,
    InvalidState,
    UnknownGame,
    UnknownVersion,
)
from .schema import MAX_ACTION_BYTES

__all__ = [
    "MAX_ACTION_BYTES", "EngineError", "Game", "IllegalAction", "InvalidAction", "InvalidSetup",
    "InvalidState", "UnknownGame", "UnknownVersion", "get", "names", "versions",
]


@cache
def _registry() -> dict[str, dict[str, Game]]:
    """Every game's versions, oldest first, by name."""
    games = {}
    for module in pkgutil.iter_modules(__path__):
        if not module.ispkg:
            continue
        package = importlib.import_module(f"{__name__}.{module.name}")
        game = getattr(package, "GAME", None)
        if isinstance(game, Game):
            played = [*getattr(package, "EARLIER", ()), game]
            games[game.name] = {version.version: version for version in played}
    return dict(sorted(games.items()))


def names() -> list[str]:
    """The registered game ids, sorted."""
    return list(_registry())


def versions(name: str) -> list[str]:
    """The versions of `name` this package plays, oldest first; the last is `get(name)`'s.
    Raises UnknownGame."""
    return list(_versions(name))


def get(name: str, version: str | None = None) -> Game:
    """The engine registered as `name`, in `version` (None: the current one); raises
    UnknownGame, or UnknownVersion for a version it does not play."""
    played = _versions(name)
    if version is None:
        return list(played.values())[-1]
    try:
        return played[version]
    except (KeyError, TypeError):
        raise UnknownVersion(f"{name} has no version {version!r}; versions played: "
                             f"{', '.join(played)}") from None


def _versions(name: str) -> dict[str, Game]:
    try:
        return _registry()[name]
    except (KeyError, TypeError):
        raise UnknownGame(f"unknown game {name!r}; known games: {', '.join(names())}") from None
