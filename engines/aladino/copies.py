"""How `apply` copies an Aladino state (engines.base.Rules._copy_for_apply): not at all
beyond the state dict and its log, because no action changes a part of the state in place.
Each replaces what it changes: a space of the cave, a token's face, a score
(engines.base.replace_item) and the way down a board to the square a token joins
(`flow.stack`). The state before keeps the old ones."""

from engines.base import shallow_copy

copy_for_apply = shallow_copy
