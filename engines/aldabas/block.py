"""A player's block: the 4x3 grid with the Vault in the bottom-left space.

Spaces are `[col, row]` with col 0..3 left to right and row 0..2 bottom to top; the Vault is
`[0, 0]`. In the state a block is a list of 12 cells indexed `row * 4 + col`: a card id or
None (the Vault cell is always None and counts as filled). Coins on doors live in a parallel
list of 12 integers.
"""

from __future__ import annotations

from .components import CARD_COLOUR, CARD_KIND, COLS, ROWS

Block = list[int | None]
VAULT = 0
SPACES = list(range(1, COLS * ROWS))


def index(col: int, row: int) -> int:
    return row * COLS + col


def space(idx: int) -> list[int]:
    return [idx % COLS, idx // COLS]


def on_grid(col: int, row: int) -> bool:
    return 0 <= col < COLS and 0 <= row < ROWS


def filled(block: Block, idx: int) -> bool:
    return idx == VAULT or block[idx] is not None


def left_of(idx: int) -> int | None:
    return idx - 1 if idx % COLS else None


def below(idx: int) -> int | None:
    return idx - COLS if idx >= COLS else None


def _neighbours(idx: int) -> tuple[int, ...]:
    col, row = idx % COLS, idx // COLS
    around = ((col - 1, row), (col + 1, row), (col, row - 1), (col, row + 1))
    return tuple(index(c, r) for c, r in around if on_grid(c, r))


# NEIGHBOURS[idx]: the spaces beside, above and below `idx`, computed once.
NEIGHBOURS = tuple(_neighbours(idx) for idx in range(COLS * ROWS))
# NEEDS[idx]: the spaces that must be filled before a door goes in `idx` (left, below).
NEEDS = tuple(tuple(n for n in (left_of(idx), below(idx)) if n is not None)
              for idx in range(COLS * ROWS))


def open_space_reason(block: Block, idx: int) -> str | None:
    """Why no door may go in `idx` whatever its colour, or None if it is open."""
    if filled(block, idx):
        return "that space of your block is already filled"
    for need in (left_of(idx), below(idx)):
        if need is not None and not filled(block, need):
            return ("the spaces directly to the left and directly below a new door can not "
                    "be empty (rulebook \"Door Placement\")")
    return None


def colour_reason(block: Block, idx: int, card: int) -> str | None:
    """Why `card` may not go in `idx` because of its colour, or None."""
    colour = CARD_COLOUR[card]
    for other in NEIGHBOURS[idx]:
        door = block[other]
        if other != VAULT and door is not None and CARD_COLOUR[door] == colour:
            return (f"a {colour} door can not be beside, above, or below a door of the same "
                    "colour (rulebook \"Door Placement\")")
    return None


def open_spaces(block: Block) -> list[int]:
    """The spaces where `open_space_reason` is None (in plain loops: legal_actions asks for
    them at every decision of a turn)."""
    spaces = []
    for idx in SPACES:
        if block[idx] is None:
            for need in NEEDS[idx]:
                if not filled(block, need):
                    break
            else:
                spaces.append(idx)
    return spaces


def neighbour_colours(block: Block, idx: int) -> set[str]:
    """The colours of the doors beside, above and below `idx` (the colours `colour_reason`
    refuses there)."""
    colours = set()
    for other in NEIGHBOURS[idx]:
        door = block[other]
        if other != VAULT and door is not None:
            colours.add(CARD_COLOUR[door])
    return colours


def is_full(block: Block) -> bool:
    return all(block[i] is not None for i in SPACES)


def count_in_block(block: Block, door: str) -> int:
    """How many doors of type `door` (e.g. "N2") the block holds."""
    count = 0
    for card in block:  # a loop costs less than a generator
        if card is not None and CARD_KIND[card] == door:
            count += 1
    return count


def soldier_count(block: Block) -> int:
    """Coins a Soldier power moves (player or Rival): one, plus one per Noble (Influence 2)
    in the block."""
    return 1 + count_in_block(block, "N2")


def door_spaces(block: Block) -> list[int]:
    """The spaces holding a door."""
    return [idx for idx, card in enumerate(block) if card is not None]
