"""What a spectator may see: only what every seat sees.

Engines define one observation per seat; the spectator's view is their common part: a value
present and equal in every seat's observation is kept, dicts and equal-length lists are
compared item by item, anything that differs between seats (a hand, a seat's own secrets,
its private log details) is left out. No seat's secret can be in it, since some other seat
does not see it.
"""

from __future__ import annotations

from typing import Any

import engines

_ABSENT = object()


def spectator_view(engine: engines.Game, state: dict) -> dict:
    views = [engine.observation(state, seat) for seat in range(engine.seats(state))]
    view = _common(views)
    view.update(seat=None, to_move=engine.current_seat(state), legal_actions=[])
    return view


def _common(values: list[Any]) -> Any:
    first = values[0]
    if all(value == first for value in values[1:]):
        return first
    if all(isinstance(value, dict) for value in values):
        shared = {}
        for key in first:
            if all(key in value for value in values[1:]):
                part = _common([value[key] for value in values])
                if part is not _ABSENT:
                    shared[key] = part
        return shared
    if all(isinstance(value, list) and len(value) == len(first) for value in values):
        items = [_common([value[index] for value in values]) for index in range(len(first))]
        return _ABSENT if any(item is _ABSENT for item in items) else items
    return _ABSENT
