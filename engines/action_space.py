"""Each game's fixed action index space (issue 30): the actions OpenSpiel and PettingZoo
number 0..N-1, mapped both ways to the engine's JSON actions.

A game's space lists every action its `legal_actions` can ever return, in an order derived
from its action schema alone: branch by branch in the schema's order, the product of each
field's values (an enum, an integer range, a pair's two ranges) in field order. Where a
field is open-ended (an amount bounded only by `engines.schema.MAX_AMOUNT`) the game gives
the values it can take, from a bound proved in `engines/<game>/action_space.py`; an open
action type (a Caravans trade offer) contributes the offers `legal_actions` lists. The same
index means the same action in every setup of a game (player count, options), and the
indices stay put as long as the schema and those bounds do (tests/engines/
test_action_space.py pins each space's size and digest).

    space = engines.action_space.of("aladino")
    space.index({"type": "move", "direction": 2})   # -> 2
    space.action(2)                                 # -> {"type": "move", "direction": 2}
"""

from __future__ import annotations

import importlib
import itertools
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from typing import Any

import orjson

from .base import Game, clone
from .errors import EngineError
from .types import Action, JsonObject

MAX_FIELD_VALUES = 10_000
"""A schema field with more values than this needs its values given (see `schema_actions`)."""


class OutsideActionSpace(EngineError):
    """The action has no index: the game's `legal_actions` never lists it (an open action,
    such as a Caravans trade offer of the bot's own making, is still valid for `apply`).
    It keeps the base's code: no referee answer ever carries it."""


class ActionSpace:
    """A fixed enumeration of a game's actions: index <-> action, both ways."""

    def __init__(self, actions: Iterable[Action]):
        self._actions: tuple[JsonObject, ...] = tuple(dict(action) for action in actions)
        self._index: dict[bytes, int] = {}
        for index, action in enumerate(self._actions):
            if self._index.setdefault(_key(action), index) != index:
                raise ValueError(f"the action {action} is listed twice")

    def __len__(self) -> int:
        return len(self._actions)

    def action(self, index: int) -> JsonObject:
        """The action numbered `index` (a new dict); IndexError outside 0..len - 1."""
        if not 0 <= index < len(self._actions):
            raise IndexError(f"action index {index} is outside 0..{len(self._actions) - 1}")
        action: JsonObject = clone(self._actions[index])
        return action

    def index(self, action: Action) -> int:
        """The number of a canonical action (as `legal_actions` or `canonical_action`
        give it); OutsideActionSpace for any other."""
        try:
            return self._index[_key(action)]
        except KeyError:
            raise OutsideActionSpace(f"the action {dict(action)} has no index in this game's "
                                     "action space") from None

    def indices(self, actions: Iterable[Action]) -> list[int]:
        """The numbers of `actions`, in their order."""
        return [self.index(action) for action in actions]


def _key(action: Action) -> bytes:
    """The same bytes for equal actions whatever the order of their keys."""
    return orjson.dumps(action, option=orjson.OPT_SORT_KEYS)


def of(game: Game | str) -> ActionSpace:
    """The action space of a game (its name or its `Game`): `engines.<name>.action_space`'s
    `SPACE`, the space of the game's current version."""
    return _space(game if isinstance(game, str) else game.name)


def max_decisions(game: Game | str, num_players: int, options: JsonObject) -> int:
    """More decisions than any game of that setup takes (OpenSpiel's max_game_length):
    `engines.<name>.action_space.max_decisions`, which proves its bound."""
    bound: int = _module(game if isinstance(game, str) else game.name).max_decisions(
        num_players, options)
    return bound


@cache
def _space(name: str) -> ActionSpace:
    space: ActionSpace = _module(name).SPACE
    return space


def _module(name: str) -> Any:
    return importlib.import_module(f"engines.{name}.action_space")


# ----- enumerating an action schema ---------------------------------------------------------
def schema_actions(schema: JsonObject,
                   values: Mapping[str, Mapping[str, Iterable[Any]]] | None = None,
                   listed: Mapping[str, Iterable[Action]] | None = None) -> Iterator[Action]:
    """Every action of an action schema (`engines.schema.action_document`), branch by
    branch. `values[type][field]` gives a field's values where the schema bounds it too
    loosely to list (an amount); `listed[type]` gives a branch's actions outright (an open
    action type: the ones `legal_actions` lists)."""
    values = values or {}
    listed = listed or {}
    for branch in schema["oneOf"]:
        kind = branch["properties"]["type"]["const"]
        if kind in listed:
            yield from listed[kind]
        else:
            yield from _branch_actions(kind, branch, values.get(kind, {}))


def _branch_actions(kind: str, branch: JsonObject, given: Mapping[str, Iterable[Any]]
                    ) -> Iterator[Action]:
    fields = [name for name in branch["properties"] if name != "type"]
    if set(fields) - set(branch["required"]):
        raise ValueError(f'"{kind}" has optional fields: list its actions')
    domains = [list(given[name]) if name in given else _values(branch["properties"][name], name)
               for name in fields]
    for combination in itertools.product(*domains):
        yield {"type": kind, **dict(zip(fields, combination, strict=True))}


def _values(schema: JsonObject, name: str) -> list[Any]:
    """Every value a field's schema allows (a const, an enum, a bounded integer, a
    boolean, a pair of those)."""
    if "const" in schema:
        return [schema["const"]]
    if "enum" in schema:
        return list(schema["enum"])
    kind = schema.get("type")
    if kind == "boolean":
        return [False, True]
    if kind == "integer" and schema["maximum"] - schema["minimum"] < MAX_FIELD_VALUES:
        return list(range(schema["minimum"], schema["maximum"] + 1))
    if kind == "array" and "prefixItems" in schema:
        items = [_values(item, name) for item in schema["prefixItems"]]
        return [list(combination) for combination in itertools.product(*items)]
    raise ValueError(f'field "{name}" has too many values to list: give them')
