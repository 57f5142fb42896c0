"""A full state behind an observation: the faces of the face-down tokens drawn.

Hidden from every seat alike (rules/aladino.md, "Tokens"): a face-down token shows only its
back, its kind or a lamp for a Genie. Every token is in sight (face up in the cave, on a
board, the Genie being placed) except the face-down ones, so the tokens no one has seen,
grouped by back, are exactly what lies face down under each back: shuffled onto those
spaces, every arrangement of them is equally likely.
"""

from __future__ import annotations

from typing import Any

from engines.errors import InvalidState
from engines.rng import Rng
from engines.types import JsonObject, State

from .components import CELL_INDEX, KINDS, TOKENS, back

BACKS = (*KINDS, "lamp")


def determinize(observation: JsonObject, rng: Rng) -> State:
    cave = observation["cave"]
    cells: list[int | None] = [_face_up_id(space["token"]) for space in cave]
    boards = [[[[token["id"] for token in square] for square in row] for row in board]
              for board in observation["boards"]]
    pending = observation["pending_genie"]
    up = [True] * len(TOKENS)
    seen = {t for t in cells if t is not None} | {t for board in boards for row in board
                                                  for square in row for t in square}
    if pending is not None:
        seen.add(pending["id"])
    for face in BACKS:
        spaces = [c for c, space in enumerate(cave) if _face_down(space["token"]) == face]
        unseen = [t.id for t in TOKENS if t.id not in seen and back(t) == face]
        if len(unseen) != len(spaces):
            raise InvalidState(f"{len(spaces)} face-down {face} tokens, {len(unseen)} unseen")
        rng.shuffle(unseen)
        for cell, token in zip(spaces, unseen, strict=True):
            cells[cell] = token
            up[token] = False
    return {
        "num_players": len(observation["scores"]),
        "options": {},
        "cells": cells,
        "aladdin": CELL_INDEX[(observation["aladdin"][0], observation["aladdin"][1])],
        "up": up,
        "boards": boards,
        "scores": list(observation["scores"]),
        "pending": None if pending is None else pending["id"],
        "turn": observation["turn"],
        "roll": observation["roll"],
        "phase": observation["phase"],
    }


def _face_up_id(token: dict[str, Any] | None) -> int | None:
    return token["id"] if token is not None and token["face"] == "up" else None


def _face_down(token: dict[str, Any] | None) -> str | None:
    return token["back"] if token is not None and token["face"] == "down" else None
