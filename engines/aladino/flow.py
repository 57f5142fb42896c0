"""The order of play: a turn is a roll, a move, the token taken and placed, then its
character's ability (rulebook "Game Play"); the game ends at once when the player to move
has no legal direction, fills their board or reaches 50 points."""

from __future__ import annotations

from engines.base import end_game, log_event, replace_item
from engines.rng import Rng
from engines.types import State

from . import scoring
from .cave import can_move, carpet_targets
from .components import CELLS, DIE_SIDES, KINDS, TOKENS, WIN_SCORE, token_json

MOVE, PLACE_GENIE, CARPET = "move", "place_genie", "carpet"
END_REASONS = ("no_move", "board_full", "score_50")


def start_turn(state: State, rng: Rng, seat: int) -> None:
    state["turn"] = seat
    roll(state, rng)


def roll(state: State, rng: Rng) -> None:
    """Roll the four-sided die; with no legal direction the game ends at once."""
    state["roll"] = rng.randint(1, DIE_SIDES)
    state["phase"] = MOVE
    log_event(state, "roll", {"seat": state["turn"], "value": state["roll"]})
    if not can_move(state):
        end_game(state, "no_move", state["turn"], "the player to move has no legal direction")


def next_turn(state: State, rng: Rng) -> None:
    start_turn(state, rng, (state["turn"] + 1) % state["num_players"])


def take(state: State, cell: int, rng: Rng) -> None:
    """Aladdin stands on `cell`: take its token, turn it face up, place it."""
    token: int = state["cells"][cell]
    replace_item(state, "cells", cell, None)
    state["aladdin"] = cell
    was_up = state["up"][token]
    replace_item(state, "up", token, True)
    log_event(state, "take", {"seat": state["turn"], "space": list(CELLS[cell]),
                              "face": "up" if was_up else "down",
                              "token": token_json(TOKENS[token])})
    kind = TOKENS[token].kind
    if kind is None:  # a Genie: its owner chooses its square
        state["phase"] = PLACE_GENIE
        state["pending"] = token
        return
    place(state, token, kind, TOKENS[token].value, rng)


def place(state: State, token: int, kind: str, value: int, rng: Rng) -> None:
    """Place a token on its square, score, then perform its character's ability."""
    seat: int = state["turn"]
    board = stack(state, seat, KINDS.index(kind), value - 1, token)
    replace_item(state, "scores", seat, scoring.score(board, scoring.favourite_of(seat)))
    state["pending"] = None
    log_event(state, "place", {"seat": seat, "token": token,
                               "square": {"kind": kind, "value": value},
                               "score": state["scores"][seat]})
    if scoring.is_full(board):
        end_game(state, "board_full", seat, f"seat {seat} filled all 20 squares of their board")
    elif state["scores"][seat] >= WIN_SCORE:
        end_game(state, "score_50", seat, f"seat {seat} reached {WIN_SCORE} points")
    else:
        ability(state, TOKENS[token].character, rng)


def stack(state: State, seat: int, row: int, column: int, token: int) -> scoring.Board:
    """Put `token` on a square of `seat`'s board and return the board. The boards, the board,
    the row and the square are new lists: the state before keeps the old ones."""
    board = list(state["boards"][seat])
    board[row] = list(board[row])
    board[row][column] = [*board[row][column], token]
    replace_item(state, "boards", seat, board)
    return board


def ability(state: State, character: str | None, rng: Rng) -> None:
    if character == "titi":
        roll(state, rng)
    elif character == "carpet" and carpet_targets(state):
        state["phase"] = CARPET
    else:
        next_turn(state, rng)
