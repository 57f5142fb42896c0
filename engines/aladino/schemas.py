"""The JSON Schemas Aladino publishes: its actions and its observations (with the log)."""

from engines.base import OVER
from engines.schema import (
    Schema,
    action,
    action_document,
    any_of,
    array,
    const,
    described,
    event,
    integer,
    nullable,
    obj,
    observation_document,
    one_of_values,
    pair,
    string,
)

from .components import CELLS, CHARACTERS, DIE_SIDES, DIRECTION_NAMES, KINDS, RADIUS, TOKENS, VALUES
from .flow import CARPET, END_REASONS, MOVE, PLACE_GENIE

MAX_SEATS = 4
PHASES = (MOVE, PLACE_GENIE, CARPET, OVER)


def _direction(description: str) -> Schema:
    names = ", ".join(f"{i} {name}" for i, name in enumerate(DIRECTION_NAMES))
    return integer(0, len(DIRECTION_NAMES) - 1, f"{description} ({names}; "
                   "components.board.directions)")


ACTIONS = action_document("aladino action", [
    action("move", "phase move, after the die was rolled (observation.roll): move Aladdin "
           "`roll` token spaces in a straight line, empty spaces uncounted, stopping at the wall "
           "on the last token reached; take that token",
           {"direction": _direction("the direction")}),
    action("place_genie", "phase place_genie, after taking a Genie: put it on any square of "
           "your board", {
               "kind": string(KINDS, "the row"),
               "value": integer(min(VALUES), max(VALUES), "the column"),
           }),
    action("carpet", "phase carpet, after taking a Magic Carpet: fly Aladdin to a token that "
           "does not show a character face up and take it", {
               "space": one_of_values((list(c) for c in CELLS),
                                      f"[q, r] of a space of the cave (max(|q|, |r|, |q+r|) <= "
                                      f"{RADIUS}, components.board.spaces)"),
           }),
])

SEAT = integer(0, MAX_SEATS - 1)
SPACE = pair(integer(-RADIUS, RADIUS), integer(-RADIUS, RADIUS),
             "[q, r] of a space of components.board.spaces")
TOKEN = obj({
    "id": integer(0, len(TOKENS) - 1, "components.tokens[id]"),
    "kind": nullable(string(KINDS), description="null for a Genie"),
    "value": integer(0, max(VALUES), "0 for a Genie"),
    "character": nullable(string(CHARACTERS), description="null for a plain treasure"),
})
FACE_UP = obj({"face": const("up"), **TOKEN["properties"]})
FACE_DOWN = obj({"face": const("down"),
                 "back": string((*KINDS, "lamp"), "its kind, or lamp for a Genie")})

VIEW = obj({
    "phase": string(PHASES, "which decision the game waits for"),
    "turn": integer(0, MAX_SEATS - 1, "the seat whose turn it is"),
    "roll": integer(1, DIE_SIDES, "the die result to move by"),
    "aladdin": described(SPACE, "[q, r] of Aladdin"),
    "cave": array(
        obj({"space": SPACE, "token": any_of(FACE_UP, FACE_DOWN, {"type": "null"})}),
        min_items=len(CELLS), max_items=len(CELLS),
        description="the 61 spaces in the order of components.board.spaces; token null "
        "(empty), face up (id, kind, value, character) or face down (back only)"),
    "boards": array(
        array(array(array(TOKEN), min_items=len(VALUES), max_items=len(VALUES)),
              min_items=len(KINDS), max_items=len(KINDS)),
        description="per seat: rows (kinds) x columns (values 1-5) of stacked tokens, "
        "boards[seat][kind][value - 1]"),
    "favourites": array(string(KINDS), description="per seat, the favourite kind"),
    "scores": array(integer(), description="per seat"),
    "pending_genie": nullable(TOKEN, description="the Genie to place, in phase place_genie"),
})

EVENTS = [
    event("roll", {"seat": SEAT, "value": integer(1, DIE_SIDES)}),
    event("move", {"seat": SEAT, "direction": _direction("the direction"),
                   "from": SPACE, "to": SPACE}),
    event("carpet", {"seat": SEAT, "from": SPACE, "to": SPACE}),
    event("take", {"seat": SEAT, "space": SPACE,
                   "face": string(("up", "down"), "how the token lay before"), "token": TOKEN}),
    event("place", {"seat": SEAT, "token": integer(0, len(TOKENS) - 1),
                    "square": obj({"kind": string(KINDS),
                                   "value": integer(min(VALUES), max(VALUES))}),
                    "score": integer(description="the seat's score after it")}),
]

OBSERVATION = observation_document("aladino observation", "aladino", MAX_SEATS, VIEW, ACTIONS,
                                   EVENTS, END_REASONS)
