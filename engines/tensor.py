"""Each game's observation tensor (issue 30): a fixed-size vector of floats made from one
seat's observation, for OpenSpiel's `observation_tensor` and PettingZoo's observations.

`of(game)` gives the game's `Encoder`: `size`, `low` and `high` (every entry's bounds, a
gymnasium Box) and `encode(observation)`. Each game writes its observation field by field
in `engines/<game>/tensor.py` (`write(writer, observation)`, documented there) with the
`Writer` below: one-hot indices, flags, numbers with their bounds, counts per kind. Seats
are written relative to the observing seat (itself first, then the seats after it in seat
order), padded to the game's most seats, so the layout is the same in every setup of a
game; what the observation does not show (a spectator's hand, an empty slot) is zeros.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from functools import cache

import numpy as np
import numpy.typing as npt

from .base import Game
from .types import JsonObject

Vector = npt.NDArray[np.float32]


class Writer:
    """Writes a tensor entry by entry; in layout mode it records each entry's bounds
    instead (the layout never depends on the values)."""

    def __init__(self, size: int | None = None):
        self.layout = size is None
        self.values: Vector = np.zeros(size or 0, np.float32)
        self.low: list[float] = []
        self.high: list[float] = []
        self.at = 0

    def _take(self, count: int, low: float, high: float | Sequence[float]) -> int:
        """Reserve `count` entries (`high`: one bound for all, or one each); the offset of
        the first."""
        start = self.at
        self.at += count
        if self.layout:
            self.low += [low] * count
            self.high += [high] * count if isinstance(high, float | int) else list(high)
        return start

    def one_hot(self, index: int | None, size: int) -> None:
        """`size` entries, 1 at `index` (none for None)."""
        start = self._take(size, 0.0, 1.0)
        if index is not None and not self.layout:
            self.values[start + index] = 1.0

    def flags(self, indices: Iterable[int], size: int) -> None:
        """`size` entries, 1 at each of `indices`."""
        start = self._take(size, 0.0, 1.0)
        if not self.layout:
            for index in indices:
                self.values[start + index] = 1.0

    def flag(self, value: bool) -> None:
        self.number(1.0 if value else 0.0, 1.0)

    def number(self, value: float, high: float, low: float = 0.0) -> None:
        """One entry from `low` to `high`."""
        start = self._take(1, low, high)
        if not self.layout:
            self.values[start] = value

    def entries(self, values: Iterable[tuple[int, float]], size: int,
                high: float | Sequence[float]) -> None:
        """`size` entries, zero but those `values` gives as (index, value) pairs (at most
        `high`, or `high[i]` for entry i)."""
        start = self._take(size, 0.0, high)
        if not self.layout:
            for index, value in values:
                self.values[start + index] = value

    def counts(self, indices: Iterable[int], size: int, high: float | Sequence[float]
               ) -> None:
        """`size` entries, each how often its index occurs in `indices` (at most `high`, or
        `high[i]` for entry i)."""
        start = self._take(size, 0.0, high)
        if not self.layout:
            for index in indices:
                self.values[start + index] += 1.0


Write = Callable[[Writer, JsonObject], None]


class Encoder:
    """A game's observation tensor: its layout, bounds and `encode`."""

    def __init__(self, write: Write, sample: JsonObject):
        self._write = write
        layout = Writer()
        write(layout, sample)
        self.size = layout.at
        self.low: Vector = np.array(layout.low, np.float32)
        self.high: Vector = np.array(layout.high, np.float32)

    def encode(self, observation: JsonObject) -> Vector:
        writer = Writer(self.size)
        self._write(writer, observation)
        if writer.at != self.size:
            raise ValueError(f"the observation wrote {writer.at} entries, not {self.size}")
        return writer.values


def relative(seat: int | None, observer: int | None, seats: int) -> int | None:
    """`seat` counted from the observer (0 itself, 1 the next seat...); a spectator counts
    from seat 0."""
    return None if seat is None else (seat - (observer or 0)) % seats


def of(game: Game | str) -> Encoder:
    """The observation tensor of a game (its name or its `Game`, current version):
    `engines.<name>.tensor.write`, laid out on an observation of a new game."""
    return _encoder(game if isinstance(game, str) else game.name)


@cache
def _encoder(name: str) -> Encoder:
    import engines

    game = engines.get(name)
    module = importlib.import_module(f"engines.{name}.tensor")
    sample = game.observation(game.new_game(game.max_players, seed=0), 0)
    write: Write = module.write
    return Encoder(write, sample)
