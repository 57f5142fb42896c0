"""What a spectator may see: only what every seat sees, and nothing that is hidden.

Engines define one observation per seat; the spectator's view is their common part: a value
present and equal in every seat's observation is kept, dicts and equal-length lists are
compared item by item, anything that differs between seats (a hand, a seat's own secrets,
its private log details) is left out.

Equality alone could leak: if two seats' secret vault coins happen to be equal, the field
`you.vault_coins` would be common to both views. So the common part is also taken over
states that differ only in what some seat may not see (the engine's `hidden_variant`, drawn
with a generator seeded by the state's hash, so the view is deterministic): a value that
depends on a secret changes there and is dropped.
"""

from __future__ import annotations

from typing import Any

import engines
from engines.rng import Rng, seed_state

from .replay import state_hash

VARIANTS_PER_SEAT = 4
_ABSENT = object()


def spectator_view(engine: engines.Game, state: dict) -> dict:
    view = _common_view(engine, state)
    rng = Rng(seed_state(state_hash(state)))
    for seat in range(engine.seats(state)):
        for _ in range(VARIANTS_PER_SEAT):
            variant = engine.hidden_variant(state, seat, rng)
            view = _common([view, _common_view(engine, variant)])
    view.update(seat=None, to_move=engine.current_seat(state), legal_actions=[])
    return view


def _common_view(engine: engines.Game, state: dict) -> dict:
    return _common([engine.observation(state, seat) for seat in range(engine.seats(state))])


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
