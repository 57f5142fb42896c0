"""A small seeded generator whose whole state is one JSON-able integer.

SplitMix64 (Steele, Lea, Flood 2014): fast, well mixed, and trivially serialisable, so the
generator can live inside a game state and seed + actions replay a game exactly.
"""

from collections.abc import MutableSequence, Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def seed_state(seed: int | str) -> int:
    """Map any integer or string seed to a 64-bit generator state."""
    if isinstance(seed, str):
        value = 0
        for byte in seed.encode():
            value = (value * 131 + byte) & _MASK
        seed = value
    return Rng((int(seed) - _GOLDEN) & _MASK).next64()  # the mix of the seed itself


class Rng:
    """Draws from a state; read `.state` back into the game state after drawing."""

    __slots__ = ("state",)

    def __init__(self, state: int):
        self.state = state

    def next64(self) -> int:
        self.state = z = (self.state + _GOLDEN) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform integer in [0, n) without modulo bias."""
        if n <= 0:
            raise ValueError("below() needs a positive bound")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            value = self.next64()
            if value < limit:
                return value % n

    def randint(self, low: int, high: int) -> int:
        """Uniform integer in [low, high], both ends included."""
        return low + self.below(high - low + 1)

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates shuffle in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def coin(self) -> bool:
        return bool(self.next64() >> 63)
