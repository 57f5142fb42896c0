"""`describe()` for Caravans: options, components and the open action types, as data."""

from __future__ import annotations

from typing import Any

from .components import components

OPEN_ACTION_TYPES = frozenset({"offer_trade"})


def description() -> dict[str, Any]:
    return {
        "name": "caravans",
        "title": "Caravans of Ahldarahd",
        "players": [2, 4],
        "options": {},
        "components": components(),
        "open_action_types": sorted(OPEN_ACTION_TYPES),
    }
