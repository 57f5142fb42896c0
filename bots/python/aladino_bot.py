"""A greedy Aladino bot: take the token that adds the most expected points to its own board.

A face-up token's gain is exact; a face-down one's is the mean over the tokens with that
back that nobody has seen yet. A Titi (move again) or Magic Carpet (fly anywhere) is worth
a little more than its points. Genies go on the square where they add the most.

It reads its observation and the game's published data (`describe()`, what
GET /games/aladino serves), and scores boards itself from `description.points`.

    python3 -m bots.python.aladino_bot --port 8001
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import fmean
from typing import Any

import engines

from .sdk import Choose, run_bot

# The value of a character's extra move, on top of the token's own points.
ABILITY_BONUS = {"titi": 3.0, "carpet": 4.0}
Board = list[list[list[int]]]

# The game's published data (GET /games/aladino): tokens, board, scoring numbers.
DESCRIPTION = engines.get("aladino").describe()
COMPONENTS = DESCRIPTION["components"]
TOKENS: list[dict[str, Any]] = COMPONENTS["tokens"]
KINDS: list[str] = COMPONENTS["kinds"]
VALUES: list[int] = COMPONENTS["values"]
DIRECTIONS = [(d["dq"], d["dr"]) for d in COMPONENTS["board"]["directions"]]
POINTS: dict[str, int] = DESCRIPTION["points"]


def back(token: dict[str, Any]) -> str:
    """What a face-down token shows: its kind, or a lamp for a Genie."""
    return token["kind"] or "lamp"


def token_points(token: dict[str, Any], favourite: str) -> int:
    """Its printed points (the Evil Sorcerer's are negative), plus the favourite bonus."""
    points = POINTS["sorcerer"] if token["character"] == "sorcerer" else token["value"]
    if token["kind"] == favourite:
        points += POINTS["favourite_princess" if token["character"] == "princess"
                         else "favourite"]
    return points


def score(board: Board, favourite: str) -> int:
    """The points of a board (description.scoring): tokens, favourites, Princesses beside
    a Magic Carpet, full rows and columns, trios."""
    tokens = [[[TOKENS[t] for t in square] for square in row] for row in board]
    total = sum(token_points(t, favourite) for row in tokens for square in row for t in square)
    for row in tokens:
        in_row = [t["character"] for square in row for t in square]
        if "carpet" in in_row:
            total += POINTS["princess_carpet"] * in_row.count("princess")
    total += POINTS["row"] * sum(all(row) for row in board)
    total += POINTS["column"] * sum(all(row[v] for row in board) for v in range(len(VALUES)))
    return total + POINTS["trio"] * sum(len(sq) // 3 for row in board for sq in row)


def my_board(observation: dict) -> Board:
    """The seat's own board as token ids, the shape the scoring functions take."""
    rows = observation["boards"][observation["seat"]]
    return [[[token["id"] for token in square] for square in row] for row in rows]


class OwnBoard:
    """The seat's own board and its points now, scored once per decision: what a token
    would add to it."""

    def __init__(self, observation: dict):
        self.board = my_board(observation)
        self.favourite = observation["favourites"][observation["seat"]]
        self.points = score(self.board, self.favourite)

    def gain(self, token_id: int) -> float:
        """Points the token adds (a Genie: on its best square), plus its ability."""
        token = TOKENS[token_id]
        if token["kind"] is None:
            return max(self.placement_gain(token_id, k, v) for k in KINDS for v in VALUES)
        points = self.placement_gain(token_id, token["kind"], token["value"])
        return points + ABILITY_BONUS.get(token["character"] or "", 0.0)

    def placement_gain(self, token_id: int, kind: str, value: int) -> int:
        square = self.board[KINDS.index(kind)][value - 1]
        square.append(token_id)
        after = score(self.board, self.favourite)
        square.pop()
        return after - self.points


def unseen_by_back(observation: dict) -> dict[str, list[int]]:
    """Token ids nobody has seen face up, grouped by the back they show face down."""
    seen = {space["token"]["id"] for space in observation["cave"]
            if space["token"] and space["token"]["face"] == "up"}
    seen.update(token["id"] for board in observation["boards"] for row in board
                for square in row for token in square)
    if observation.get("pending_genie"):
        seen.add(observation["pending_genie"]["id"])
    pools: dict[str, list[int]] = {}
    for token in TOKENS:
        if token["id"] not in seen:
            pools.setdefault(back(token), []).append(token["id"])
    return pools


class Appraiser:
    """Expected gains of the tokens in the cave, for one decision."""

    def __init__(self, observation: dict):
        self.own = OwnBoard(observation)
        self.pools = unseen_by_back(observation)
        self.cave = {tuple(space["space"]): space["token"] for space in observation["cave"]}
        self.by_back: dict[str, float] = {}

    def value_at(self, space: tuple[int, int]) -> float:
        token = self.cave[space]
        if token["face"] == "up":
            return self.own.gain(token["id"])
        if token["back"] not in self.by_back:
            self.by_back[token["back"]] = self.face_down_gain(token["back"])
        return self.by_back[token["back"]]

    def face_down_gain(self, token_back: str) -> float:
        """The mean gain of the unseen tokens with this back (each face-down token of a
        back is worth the same, so it is computed once per back and decision)."""
        pool = self.pools.get(token_back) or [t["id"] for t in TOKENS if back(t) == token_back]
        return fmean(self.own.gain(t) for t in pool)

    def destination(self, start: tuple[int, int], direction: int, roll: int) -> tuple[int, int]:
        """Where a move stops: `roll` token spaces on, empty spaces uncounted, the wall ends it."""
        (q, r), (dq, dr) = start, DIRECTIONS[direction]
        counted, last = 0, start
        while counted < roll and (q + dq, r + dr) in self.cave:
            q, r = q + dq, r + dr
            if self.cave[(q, r)] is not None:
                counted, last = counted + 1, (q, r)
        return last


def choose_greedy(observation: dict, legal_actions: Sequence[dict]) -> dict:
    """The legal action with the highest expected gain (the first one on ties)."""
    return choose_greedy_with(OwnBoard, Appraiser, observation, legal_actions)


def choose_greedy_with(board: Callable[[dict], Any], appraiser_of: Callable[[dict], Any],
                       observation: dict, legal_actions: Sequence[dict]) -> dict:
    """`choose_greedy` with other (faster) makers of the board's and the cave's appraisal,
    which answer the same questions."""
    kind = legal_actions[0]["type"]
    if kind == "place_genie":
        own, genie = board(observation), observation["pending_genie"]["id"]
        return max(legal_actions, key=lambda a: own.placement_gain(genie, a["kind"], a["value"]))
    appraiser = appraiser_of(observation)
    if kind == "carpet":
        return max(legal_actions, key=lambda a: appraiser.value_at(tuple(a["space"])))
    start, roll = tuple(observation["aladdin"]), observation["roll"]
    return max(legal_actions, key=lambda a: appraiser.value_at(
        appraiser.destination(start, a["direction"], roll)))


def make_choose(seed: int | None = None) -> Choose:
    """The greedy chooser (deterministic: `seed` is accepted for a uniform bot interface)."""
    return choose_greedy


if __name__ == "__main__":
    raise SystemExit(run_bot(make_choose, "a greedy Aladino bot"))
