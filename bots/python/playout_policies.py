"""The greedy bots' moves, made fast for the playouts of a search (bots/python/ismcts_bot.py).

`policy(game)` is the greedy chooser a playout uses for that game: the game's greedy bot
(`bots.python.<game>_bot`), or a faster one that picks the very same move on every
decision (tests/bots/test_ismcts_bot.py compares them). The Aladino bot scores a whole
board for every token it weighs (about a millisecond a decision); `aladino_greedy` adds a
token's points to a board from counts kept per row, column and square instead, a few times
faster, which is most of a playout's time.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

from . import aladino_bot
from .aladino_bot import ABILITY_BONUS, KINDS, POINTS, TOKENS, VALUES, token_points

Policy = Callable[[dict, Sequence[Any]], dict]


class BoardCounts(aladino_bot.OwnBoard):
    """`aladino_bot.OwnBoard` from counts kept per row, column and square: what a token
    adds without scoring the whole board."""

    def __init__(self, observation: dict):  # no super().__init__: it scores the board
        board = observation["boards"][observation["seat"]]
        self.favourite = observation["favourites"][observation["seat"]]
        self.heights = [[len(square) for square in row] for row in board]
        characters = [[t["character"] for square in row for t in square] for row in board]
        self.carpet = ["carpet" in row for row in characters]
        self.princesses = [row.count("princess") for row in characters]
        self.filled_in_row = [sum(1 for h in row if h) for row in self.heights]
        self.filled_in_column = [sum(1 for row in self.heights if row[v])
                                 for v in range(len(VALUES))]
        self.genie: int | None = None  # every Genie's gain, once weighed

    def gain(self, token_id: int) -> float:
        token = TOKENS[token_id]
        if token["kind"] is None:
            if self.genie is None:
                self.genie = max(self.square_gain(token, r, c)
                                 for r in range(len(KINDS)) for c in range(len(VALUES)))
            return self.genie
        gain = self.square_gain(token, KINDS.index(token["kind"]), token["value"] - 1)
        return gain + ABILITY_BONUS.get(token["character"] or "", 0.0)

    def placement_gain(self, token_id: int, kind: str, value: int) -> int:
        return self.square_gain(TOKENS[token_id], KINDS.index(kind), value - 1)

    def square_gain(self, token: dict[str, Any], row: int, column: int) -> int:
        """The points `token` adds on square (row, column), as the board's score counts
        them: its own, a Princess beside a Carpet, a row or column filled, a trio."""
        gain = token_points(token, self.favourite)
        character = token["character"]
        if character == "princess" and self.carpet[row]:
            gain += POINTS["princess_carpet"]
        elif character == "carpet" and not self.carpet[row]:
            gain += POINTS["princess_carpet"] * self.princesses[row]
        height = self.heights[row][column]
        if not height:
            gain += POINTS["row"] * (self.filled_in_row[row] == len(VALUES) - 1)
            gain += POINTS["column"] * (self.filled_in_column[column] == len(KINDS) - 1)
        return gain + POINTS["trio"] * (height % 3 == 2)


class FastAppraiser(aladino_bot.Appraiser):
    """`aladino_bot.Appraiser` on `BoardCounts`."""

    def __init__(self, observation: dict):  # no super().__init__: its board is slow
        self.own = BoardCounts(observation)
        self.pools = aladino_bot.unseen_by_back(observation)
        self.cave = {tuple(space["space"]): space["token"] for space in observation["cave"]}
        self.by_back = {}

    def face_down_gain(self, token_back: str) -> float:
        """The mean as `aladino_bot` takes it (exact: the gains are whole or half numbers),
        without `statistics.fmean`'s cost."""
        pool = self.pools.get(token_back) or [
            t["id"] for t in TOKENS if aladino_bot.back(t) == token_back]
        return sum(self.own.gain(t) for t in pool) / len(pool)


def aladino_greedy(observation: dict, legal_actions: Sequence[Any]) -> dict:
    """`aladino_bot.choose_greedy`'s move, found faster."""
    return aladino_bot.choose_greedy_with(BoardCounts, FastAppraiser, observation,
                                          legal_actions)


FAST = {"aladino": aladino_greedy}


def policy(game: str) -> Policy | None:
    """The greedy chooser for playouts of `game` (None when the game has no greedy bot)."""
    if game in FAST:
        return FAST[game]
    try:
        module = importlib.import_module(f"{__package__}.{game}_bot")
    except ModuleNotFoundError:
        return None
    chooser: Policy = module.make_choose(None)
    return chooser
