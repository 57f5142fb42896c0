"""Aladino's fixed action index space (engines.action_space) and the bound on its length.

Every action of the schema: 6 directions, 20 board squares for a Genie, 61 spaces of the
cave for the Magic Carpet, 87 in all.
"""

from __future__ import annotations

from engines.action_space import ActionSpace, schema_actions
from engines.types import JsonObject

from .components import TOKENS
from .schemas import ACTIONS

SPACE = ActionSpace(schema_actions(ACTIONS))
GENIES = sum(1 for token in TOKENS if token.kind is None)


def max_decisions(num_players: int, options: JsonObject) -> int:
    """Every move and every flight takes one of the tokens from the cave, and each Genie
    taken is placed once: at most one decision per token plus one per Genie."""
    return len(TOKENS) + GENIES
