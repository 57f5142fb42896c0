"""The shapes the engines exchange: states, actions, log events, the end record, results,
observations (design.md section 3). `engines.base` implements the interface over them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

State = dict[str, Any]
"""One match: a JSON object whose keys each game documents (with `log` and `end`)."""
Action = Mapping[str, Any]
"""A small JSON object with a string `type`; each game types its own with TypedDicts."""
JsonObject = dict[str, Any]
Event = dict[str, Any]
"""A log entry: `{"event": kind, ...}`."""


class End(TypedDict):
    """How a game ended (python-chess's `Outcome` as data): the same in every game."""

    reason: str
    """Why, one of the game's end reasons (its observation schema lists them)."""
    seat: int | None
    """The seat whose move ended the game or set its end off; None when no seat did."""
    text: str
    """The same as a sentence."""


class Result(TypedDict):
    scores: list[int]
    ranks: list[int]
    details: JsonObject
    """Game-specific details, with `end`: the end record."""


class Observation(TypedDict):
    """The fields every observation has, besides the game's own."""

    game: str
    seat: int | None
    to_move: int | None
    legal_actions: list[Action]
    log: list[Event]
    end: End | None


class Variant(TypedDict):
    num_players: int
    options: JsonObject
