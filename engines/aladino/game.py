"""Aladino y la cueva de las maravillas: rulebook 002 with the decisions of rules/aladino.md."""

from engines.base import Action, Game, State, log_event, ranks_from_scores
from engines.errors import IllegalAction
from engines.rng import Rng

from . import scoring
from .components import (
    ALADDIN,
    CELL_INDEX,
    CELLS,
    DIE_SIDES,
    DIRECTION_NAMES,
    DIRECTIONS,
    KINDS,
    NEIGHBOUR,
    TOKENS,
    VALUES,
    WIN_SCORE,
    back,
    token_json,
)
from .describe import description
from .schemas import ACTIONS, OBSERVATION

MOVE, PLACE_GENIE, CARPET, OVER = "move", "place_genie", "carpet", "over"


class AladinoGame(Game):
    name = "aladino"
    version = "1.0.0"
    min_players = 2
    max_players = 4
    action_schema = ACTIONS
    observation_schema = OBSERVATION

    def _description(self) -> dict:
        return description()

    # ----- setup -------------------------------------------------------------------------
    def _setup(self, state: State, rng: Rng) -> None:
        """Setup: tokens scattered face up or down; Aladdin's token marks the start."""
        order = list(range(len(TOKENS) + 1))
        rng.shuffle(order)
        state["cells"] = [None if t == ALADDIN else t for t in order]
        state["aladdin"] = order.index(ALADDIN)
        state["up"] = [rng.coin() for _ in TOKENS]
        state["boards"] = [scoring.empty_board() for _ in range(state["num_players"])]
        state["scores"] = [0] * state["num_players"]
        state["pending"] = None
        state["end"] = None
        _start_turn(state, rng, seat=0)

    # ----- queries -----------------------------------------------------------------------
    def current_seat(self, state: State) -> int | None:
        return None if state["phase"] == OVER else state["turn"]

    def legal_actions(self, state: State) -> list[Action]:
        phase = state["phase"]
        if phase == MOVE:
            return [{"type": "move", "direction": d} for d in legal_directions(state)]
        if phase == PLACE_GENIE:
            return [{"type": "place_genie", "kind": k, "value": v} for k in KINDS for v in VALUES]
        if phase == CARPET:
            return [{"type": "carpet", "space": list(CELLS[c])} for c in carpet_targets(state)]
        return []

    # ----- actions -----------------------------------------------------------------------
    def _apply(self, state: State, action: Action, rng: Rng) -> None:
        phase, expected = state["phase"], _PHASE_OF[action["type"]]
        if phase != expected:
            raise IllegalAction(
                f'a "{action["type"]}" action is not allowed now: '
                f'the game waits for "{_ACTION_OF[phase]}"'
            )
        _HANDLERS[action["type"]](state, action, rng)

    # ----- observation and result ------------------------------------------------------------
    def _view(self, state: State, seat: int | None) -> dict:
        return {
            "phase": state["phase"],
            "turn": state["turn"],
            "roll": state["roll"],
            "aladdin": list(CELLS[state["aladdin"]]),
            "cave": [_space_view(state, c) for c in range(len(CELLS))],
            "boards": [_board_view(board) for board in state["boards"]],
            "favourites": [favourite(p) for p in range(state["num_players"])],
            "scores": list(state["scores"]),
            "pending_genie": token_json(TOKENS[state["pending"]]) if state["pending"] is not None
            else None,
            "end": state["end"],
        }

    def _result(self, state: State) -> dict:
        scores = list(state["scores"])
        return {
            "scores": scores,
            "ranks": ranks_from_scores(scores),
            "details": {
                "end": state["end"],
                "breakdown": [
                    scoring.breakdown(board, favourite(p))
                    for p, board in enumerate(state["boards"])
                ],
            },
        }

    def hidden_variant(self, state: State, seat: int, rng: Rng) -> State:
        """Face-down tokens with the same back swap places; the future dice change."""
        variant = self.to_json(state)
        by_back: dict[str, list[int]] = {}
        for cell, token in enumerate(variant["cells"]):
            if token is not None and not variant["up"][token]:
                by_back.setdefault(back(TOKENS[token]), []).append(cell)
        for cells in by_back.values():
            tokens = [variant["cells"][c] for c in cells]
            rng.shuffle(tokens)
            for cell, token in zip(cells, tokens, strict=True):
                variant["cells"][cell] = token
        variant["rng"] = rng.next64()
        return variant


def favourite(seat: int) -> str:
    """Seat i's board has kind i as its favourite treasure (rules/aladino.md, Players)."""
    return KINDS[seat]


# ----- movement ----------------------------------------------------------------------------
def destination(state: State, direction: int) -> int | None:
    """Where a move of `roll` token spaces in `direction` stops, or None if no token lies along it.

    Empty spaces are passed over uncounted; at the wall Aladdin stops on the last token reached.
    """
    cells, roll = state["cells"], state["roll"]
    cell, counted, last_token = state["aladdin"], 0, None
    while counted < roll:
        cell = NEIGHBOUR[cell][direction]
        if cell < 0:
            break
        if cells[cell] is not None:
            counted += 1
            last_token = cell
    return last_token


def legal_directions(state: State) -> list[int]:
    return [d for d in range(len(DIRECTIONS)) if destination(state, d) is not None]


def shows_character(state: State, token: int) -> bool:
    """The token lies face up with a character on it (the Magic Carpet may not take it)."""
    return state["up"][token] and TOKENS[token].character is not None


def carpet_targets(state: State) -> list[int]:
    """Token spaces that do not show a character face up."""
    return [
        c for c, t in enumerate(state["cells"]) if t is not None and not shows_character(state, t)
    ]


# ----- turn flow ---------------------------------------------------------------------------
def _start_turn(state: State, rng: Rng, seat: int) -> None:
    state["turn"] = seat
    _roll(state, rng)


def _roll(state: State, rng: Rng) -> None:
    """Roll the four-sided die; with no legal direction the game ends at once."""
    state["roll"] = rng.randint(1, DIE_SIDES)
    state["phase"] = MOVE
    log_event(state, {"type": "roll", "seat": state["turn"], "value": state["roll"]})
    if not legal_directions(state):
        _end(state, "no_move", "the player to move has no legal direction")


def _next_turn(state: State, rng: Rng) -> None:
    _start_turn(state, rng, (state["turn"] + 1) % state["num_players"])


def _end(state: State, reason: str, text: str) -> None:
    state["phase"] = OVER
    state["end"] = {"reason": reason, "seat": state["turn"], "text": text}
    log_event(state, {"type": "end", **state["end"]})


def _take(state: State, cell: int, rng: Rng) -> None:
    """Aladdin stands on `cell`: take its token, turn it face up, place it."""
    token = state["cells"][cell]
    state["cells"][cell] = None
    state["aladdin"] = cell
    was_up = state["up"][token]
    state["up"][token] = True
    log_event(state, {"type": "take", "seat": state["turn"], "space": list(CELLS[cell]),
                      "face": "up" if was_up else "down", "token": token_json(TOKENS[token])})
    if TOKENS[token].character == "genie":
        state["phase"] = PLACE_GENIE
        state["pending"] = token
        return
    _place(state, token, TOKENS[token].kind, TOKENS[token].value, rng)


def _place(state: State, token: int, kind: str, value: int, rng: Rng) -> None:
    """Place a token on its square, score, then perform its character's ability."""
    seat = state["turn"]
    board = state["boards"][seat]
    board[KINDS.index(kind)][value - 1].append(token)
    state["scores"][seat] = scoring.score(board, favourite(seat))
    state["pending"] = None
    log_event(state, {"type": "place", "seat": seat, "token": token,
                      "square": {"kind": kind, "value": value}, "score": state["scores"][seat]})
    if scoring.is_full(board):
        _end(state, "board_full", f"seat {seat} filled all 20 squares of their board")
    elif state["scores"][seat] >= WIN_SCORE:
        _end(state, "score_50", f"seat {seat} reached {WIN_SCORE} points")
    else:
        _ability(state, TOKENS[token].character, rng)


def _ability(state: State, character: str | None, rng: Rng) -> None:
    if character == "titi":
        _roll(state, rng)
    elif character == "carpet" and carpet_targets(state):
        state["phase"] = CARPET
    else:
        _next_turn(state, rng)


# ----- action handlers ------------------------------------------------------------------------
def _do_move(state: State, action: Action, rng: Rng) -> None:
    direction = action["direction"]
    target = destination(state, direction)
    if target is None:
        raise IllegalAction(
            f"no token lies {DIRECTION_NAMES[direction]} of Aladdin: the movement must go "
            "through squares with Treasure tokens on them"
        )
    log_event(state, {"type": "move", "seat": state["turn"], "direction": direction,
                      "from": list(CELLS[state["aladdin"]]), "to": list(CELLS[target])})
    _take(state, target, rng)


def _do_place_genie(state: State, action: Action, rng: Rng) -> None:
    _place(state, state["pending"], action["kind"], action["value"], rng)


def _do_carpet(state: State, action: Action, rng: Rng) -> None:
    cell = CELL_INDEX[tuple(action["space"])]
    token = state["cells"][cell]
    if token is None:
        raise IllegalAction(
            f"space {list(CELLS[cell])} is empty: the Magic Carpet flies to a token"
        )
    if shows_character(state, token):
        raise IllegalAction(
            f"the token on {list(CELLS[cell])} shows a character: the Magic Carpet may only take "
            "a token that hasn't a visible character on it"
        )
    log_event(state, {"type": "carpet", "seat": state["turn"],
                      "from": list(CELLS[state["aladdin"]]), "to": list(CELLS[cell])})
    _take(state, cell, rng)


_HANDLERS = {"move": _do_move, "place_genie": _do_place_genie, "carpet": _do_carpet}
_PHASE_OF = {"move": MOVE, "place_genie": PLACE_GENIE, "carpet": CARPET}
_ACTION_OF = {
    MOVE: "move", PLACE_GENIE: "place_genie", CARPET: "carpet", OVER: "nothing (game over)",
}


# ----- views --------------------------------------------------------------------------------
def _space_view(state: State, cell: int) -> dict:
    token = state["cells"][cell]
    view: dict = {"space": list(CELLS[cell]), "token": None}
    if token is not None:
        if state["up"][token]:
            view["token"] = {"face": "up", **token_json(TOKENS[token])}
        else:
            view["token"] = {"face": "down", "back": back(TOKENS[token])}
    return view


def _board_view(board: list[list[list[int]]]) -> list[list[list[dict]]]:
    return [[[token_json(TOKENS[t]) for t in square] for square in row] for row in board]
