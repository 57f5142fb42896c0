"""Earlier versions of a game, still played exactly, so that their replays and saved states
verify (a replay re-runs seed + actions and compares the hash of every state's JSON).

An earlier version whose rules are the current ones, spelled differently (another log key,
another end record), is the current game behind a `Vocabulary`: its states, observations
and results translated to the old words on the way out and its states to the current ones
on the way in, losslessly, so the old version's states come out byte for byte. A version
whose rules differ needs its own rules instead (a copy of the old package).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

from .base import Game, clone
from .rng import Rng
from .types import Action, Event, JsonObject, Result, State, Variant


class Vocabulary(ABC):
    """How an earlier version spelled what the current version says."""

    version: str
    """The earlier version's number."""

    @abstractmethod
    def old_state(self, state: State) -> State:
        """A current state in this version's words (its "version" is set by the caller)."""

    @abstractmethod
    def new_state(self, state: State) -> State:
        """A state of this version in the current words, the inverse of `old_state`."""

    @abstractmethod
    def old_observation(self, observation: JsonObject) -> JsonObject:
        """A current observation as this version showed it."""

    @abstractmethod
    def old_result(self, result: Result) -> Result:
        """A current result as this version gave it."""

    @abstractmethod
    def old_observation_schema(self, schema: JsonObject) -> JsonObject:
        """The current observation schema changed into this version's."""


class EarlierVersion(Game):
    """An earlier version of `current`: the same rules, the `vocabulary`'s words."""

    def __init__(self, current: Game, vocabulary: Vocabulary):
        self.current = current
        self.vocabulary = vocabulary
        self.name = current.name
        self.version = vocabulary.version
        self.min_players = current.min_players
        self.max_players = current.max_players
        self.action_schema = current.action_schema
        self.observation_schema = vocabulary.old_observation_schema(
            clone(current.observation_schema))
        self.open_action_types = current.open_action_types

    def describe(self) -> JsonObject:
        return {**self.current.describe(), "observation_schema": clone(self.observation_schema)}

    def new_game(self, num_players: int, seed: int, options: Mapping[str, Any] | None = None
                 ) -> State:
        return self._old(self.current.new_game(num_players, seed, options))

    def current_seat(self, state: State) -> int | None:
        return self.current.current_seat(self._new(state))

    def legal_actions(self, state: State) -> list[Action]:
        return self.current.legal_actions(self._new(state))

    def canonical_action(self, action: object) -> JsonObject:
        return self.current.canonical_action(action)

    def apply(self, state: State, action: object) -> State:
        return self._old(self.current.apply(self._new(state), action))

    def observation(self, state: State, seat: int | None) -> JsonObject:
        return self.vocabulary.old_observation(self.current.observation(self._new(state), seat))

    def result(self, state: State) -> Result:
        return self.vocabulary.old_result(self.current.result(self._new(state)))

    def determinize(self, observation: JsonObject, seed: int) -> State:
        """Only the current version determinizes (a bot plays the current rules)."""
        raise NotImplementedError(
            f"{self.name} {self.version} does not determinize: use version "
            f"{self.current.version}")

    def variants(self) -> list[Variant]:
        return self.current.variants()

    def normalize_options(self, num_players: int, options: JsonObject) -> JsonObject:
        return self.current.normalize_options(num_players, options)

    def seats(self, state: State) -> int:
        return self.current.seats(self._new(state))

    def hidden_variant(self, state: State, seat: int, rng: Rng) -> State:
        return self._old(self.current.hidden_variant(self._new(state), seat, rng))

    def _old(self, state: State) -> State:
        return {**self.vocabulary.old_state(state), "version": self.version}

    def _new(self, state: State) -> State:
        return {**self.vocabulary.new_state(state), "version": self.current.version}


def renamed(entry: Event, old: str, new: str) -> Event:
    """The log entry with its key `old` called `new`, in the same place."""
    return {new if key == old else key: value for key, value in entry.items()}


def with_log(state: State, translate: Callable[[Event], Event]) -> State:
    """A shallow copy of `state` with every log entry translated by `translate(entry)`."""
    return {**state, "log": [translate(entry) for entry in state["log"]]}
