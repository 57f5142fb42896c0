"""The Game interface (design.md section 3, a public contract) and `Rules`, its one
implementation for every game.

A state is a plain JSON-able dict. `Game` is what the referee, bots and tools call.
`Rules` implements it as templates: the public methods check what every game shares
(setup arguments, the shape of an action, a finished game, seat numbers, copying the
state) and hand the rest to a game's `phases` (engines.phases) and five `_underscore`
methods. An earlier version of a game is a `Game` too (engines.legacy).

Every state holds `log`, the events so far, each `{"event": kind, ...}`, and `end`, null
until the game is over and then its end record `{"reason", "seat", "text"}`; the game's
last event is `{"event": "end", **end}`.

States share what `apply` did not change: the log's entries, and the parts of the state
that a game's `_copy_for_apply` does not copy (parts its actions replace rather than change
in place, `replace_item`). Treat a state as a value; `to_json` gives a private deep copy.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import orjson

from .errors import IllegalAction, InvalidAction, InvalidSetup, InvalidState
from .phases import Phases
from .rng import Rng, seed_state
from .schema import compile_action_check
from .types import Action, End, Event, JsonObject, Observation, Result, State, Variant

if TYPE_CHECKING:
    from .view_memo import Memo

__all__ = [  # the shapes of engines.types too, for code that imports them from here
    "OVER", "Action", "End", "Event", "Game", "JsonObject", "Observation", "Result", "Rules",
    "State", "Variant", "clone", "end_game", "log_event", "log_from_view", "ranks_from_scores",
    "replace_item", "shallow_copy", "visible_log",
]

OVER = "over"
"""The phase of a finished game, in every game."""


def clone(value: Any) -> Any:
    """Deep copy of a JSON-able value: a round trip through orjson, about three times faster
    than a recursive copy in Python (and it proves the value is JSON-able)."""
    return orjson.loads(orjson.dumps(value))


def ranks_from_scores(scores: Sequence[float], tiebreak: Sequence[Any] | None = None
                      ) -> list[int]:
    """Competition ranks (1 is best; equal keys share a rank, the next rank is skipped)."""
    keys = [(s, tiebreak[i] if tiebreak else 0) for i, s in enumerate(scores)]
    return [1 + sum(1 for other in keys if other > key) for key in keys]


class Game(ABC):
    """Rules and metadata of one version of one game; every method is pure and takes the
    state explicitly."""

    name: str
    version: str
    min_players: int
    max_players: int
    action_schema: JsonObject
    """JSON Schema (draft 2020-12) of every action: `apply` raises InvalidAction exactly for
    the actions it rejects (engines.schema)."""
    observation_schema: JsonObject
    """JSON Schema (draft 2020-12) of every `observation(state, seat)`, spectators included."""
    open_action_types: frozenset[str] = frozenset()
    """Action types `legal_actions` lists only some of (any other that fits the schema may
    be sent; `apply` judges it)."""

    @abstractmethod
    def describe(self) -> JsonObject:
        """JSON-able description: options, components, the action reference (each action
        type with its text) and the JSON Schemas of actions and observations."""

    @abstractmethod
    def new_game(self, num_players: int, seed: int, options: Mapping[str, Any] | None = None
                 ) -> State:
        """A fresh match; all its chance comes from `seed`."""

    @abstractmethod
    def current_seat(self, state: State) -> int | None:
        """The seat to decide, or None when the game is over."""

    @abstractmethod
    def legal_actions(self, state: State) -> list[Action]:
        """Every legal action of the current seat, in a fixed order; [] when over."""

    @abstractmethod
    def canonical_action(self, action: object) -> JsonObject:
        """The form of `action` a replay stores (InvalidAction when malformed)."""

    @abstractmethod
    def apply(self, state: State, action: object) -> State:
        """The state after `action`; `state` itself is never changed."""

    @abstractmethod
    def observation(self, state: State, seat: int | None) -> JsonObject:
        """What `seat` may see (`seat=None`: a spectator)."""

    def is_over(self, state: State) -> bool:
        return self.current_seat(state) is None

    @abstractmethod
    def result(self, state: State) -> Result:
        """{"scores": [...], "ranks": [...], "details": {..., "end": ...}} once over."""

    @abstractmethod
    def determinize(self, observation: JsonObject, seed: int) -> State:
        """A full state that `observation` could have been seen in, drawn from `seed`:
        `observation(state, seat)` gives `observation` back (the same legal actions), and
        every assignment of what that seat may not see (other hands, face-down items, the
        order of what is still to be drawn) that agrees with the observation and its log has
        a chance. Future chance starts from a generator seeded by `seed`. Pure: the same
        observation and seed give the same state. What a bot searching over the hidden part
        of the game needs; the observation alone is enough.

        The state's log keeps the observing seat's private details only (other seats' are
        not known to it). InvalidState when the observation is not one of this game (or
        fits no state), InvalidSetup for a seed `new_game` would refuse."""

    def to_json(self, state: State) -> JsonObject:
        data: JsonObject = clone(state)
        return data

    def from_json(self, data: object) -> State:
        """A saved state of this game and version (InvalidState otherwise)."""
        if not isinstance(data, dict) or data.get("game") != self.name:
            raise InvalidState(f"not a saved {self.name} state")
        if data.get("version") != self.version:
            raise InvalidState(
                f"state of {self.name} version {data.get('version')!r}, engine is "
                f"{self.version}: play it with engines.get({self.name!r}, version=...)")
        state: State = clone(data)
        return state

    # ----- extensions used by the referee and the conformance suite -------------------------
    @abstractmethod
    def variants(self) -> list[Variant]:
        """Every supported (num_players, options) setup, for tests and benchmarks."""

    @abstractmethod
    def normalize_options(self, num_players: int, options: JsonObject) -> JsonObject:
        """Check the player count and options; return them with defaults filled in."""

    @abstractmethod
    def seats(self, state: State) -> int:
        """How many seats decide in this match (solo games: one)."""

    @abstractmethod
    def hidden_variant(self, state: State, seat: int, rng: Rng) -> State:
        """A state that differs from `state` only in what `seat` may not see (e.g. other
        hands and the deck reshuffled). The conformance suite checks that `seat`'s
        observation is the same for both, which proves no secret leaks."""


class Rules(Game):
    """A game implemented by its rules: the public methods are templates around the
    game's `phases` and its `_underscore` methods."""

    phases: Phases
    """Every move of every phase: `legal_actions` and `apply` go through it."""
    private_event_fields: Mapping[str, tuple[str, ...]] = {}
    """Per log event kind, the fields only the seat concerned sees (`log_event`'s
    `private`): `determinize` puts them back under the observing seat."""

    def describe(self) -> JsonObject:
        description: JsonObject = clone({
            **self._description(),
            "actions": {branch["title"]: branch["description"]
                        for branch in self.action_schema["oneOf"]},
            "action_schema": self.action_schema,
            "observation_schema": self.observation_schema,
        })
        return description

    def new_game(self, num_players: int, seed: int, options: Mapping[str, Any] | None = None
                 ) -> State:
        if not isinstance(num_players, int) or isinstance(num_players, bool):
            raise InvalidSetup("num_players must be an integer")
        check_seed(seed)
        state: State = {
            "game": self.name,
            "version": self.version,
            "num_players": num_players,
            "options": self.normalize_options(num_players, dict(options or {})),
            "seed": seed,
            "log": [],
            "end": None,
        }
        rng = Rng(seed_state(seed))
        self._setup(state, rng)
        state["rng"] = rng.state
        return state

    def legal_actions(self, state: State) -> list[Action]:
        return self.phases.legal_actions(state)

    def canonical_action(self, action: object) -> JsonObject:
        """A new dict with only the keys the game defines, in the order of the action
        schema, numbers such as 3.0 as integers.

        Raises InvalidAction when the action schema rejects `action` (not an object, an
        unknown type, missing or unknown keys, wrong JSON types, values out of range, or
        more than engines.MAX_ACTION_BYTES of JSON). `apply` applies this form, so applying
        an action or its canonical form gives the same state."""
        return self._check_action(action)

    def apply(self, state: State, action: object) -> State:
        """InvalidAction for an action the action schema rejects, IllegalAction for one the
        rules forbid now."""
        canonical = self._check_action(action)  # canonical_action, one call less
        if self.current_seat(state) is None:
            raise IllegalAction("the game is over: no more actions are accepted")
        new_state = self._copy_for_apply(state)
        rng = Rng(new_state["rng"])
        self._apply(new_state, canonical, rng)
        new_state["rng"] = rng.state
        return new_state

    def observation(self, state: State, seat: int | None) -> JsonObject:
        """Public state, `seat`'s own secrets, its legal actions, the log, the end record;
        a spectator (`seat=None`) gets only what every seat sees."""
        if seat is not None:
            self.check_seat(state, seat)
        return self.observed(state, seat, self._view(state, seat),
                             self.shown_legal_actions(state, seat), visible_log(state, seat))

    def shown_legal_actions(self, state: State, seat: int | None) -> list[Action]:
        """The legal actions an observation of `seat` shows: none unless it is to move."""
        return self.legal_actions(state) if seat is not None and self.current_seat(
            state) == seat else []

    def observed(self, state: State, seat: int | None, view: Mapping[str, Any],
                 legal_actions: Any, log: Any) -> JsonObject:
        """An observation from its parts: the game's view, then what every game shows
        (engines.observation_json gives the legal actions and the log as JSON here)."""
        common: Observation = {
            "game": self.name,
            "seat": seat,
            "to_move": self.current_seat(state),
            "legal_actions": legal_actions,
            "log": log,
            "end": state["end"],
        }
        return {**view, **common}

    def result(self, state: State) -> Result:
        if not self.is_over(state):
            raise IllegalAction("the game is not over yet")
        result = self._result(state)
        result["details"]["end"] = state["end"]
        return result

    def determinize(self, observation: JsonObject, seed: int) -> State:
        """The common part (the log, the end, the generator) around the game's
        `_determinize`."""
        check_seed(seed)
        if not isinstance(observation, dict) or observation.get("game") != self.name:
            raise InvalidState(f"not an observation of {self.name}")
        rng = Rng(seed_state(seed))
        try:
            hidden = self._determinize(observation, rng)
            log = log_from_view(observation["log"], observation["seat"],
                                self.private_event_fields)
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise InvalidState(f"not a whole {self.name} observation: {error!r}") from error
        state: State = {
            "game": self.name,
            "version": self.version,
            "num_players": hidden.pop("num_players"),
            "options": hidden.pop("options"),
            "seed": seed,
            "log": log,
            "end": clone(observation.get("end")),
            **hidden,
        }
        state["rng"] = rng.state
        return state

    def variants(self) -> list[Variant]:
        return [
            {"num_players": n, "options": {}}
            for n in range(self.min_players, self.max_players + 1)
        ]

    def normalize_options(self, num_players: int, options: JsonObject) -> JsonObject:
        if options:
            raise InvalidSetup(f"{self.name} takes no options, got {sorted(options)}")
        self.check_player_count(num_players)
        return options

    def check_player_count(self, num_players: int, low: int | None = None,
                           high: int | None = None) -> None:
        low = self.min_players if low is None else low
        high = self.max_players if high is None else high
        if not low <= num_players <= high:
            raise InvalidSetup(
                f"{self.name} is played by {low} to {high} players, not {num_players}"
            )

    def seats(self, state: State) -> int:
        seats: int = state["num_players"]
        return seats

    def check_seat(self, state: State, seat: int) -> None:
        if not isinstance(seat, int) or not 0 <= seat < self.seats(state):
            raise InvalidAction(f"seat must be an integer from 0 to {self.seats(state) - 1}")

    def _copy_for_apply(self, state: State) -> State:
        """The copy of `state` that `_apply` changes: a deep copy but for the log's entries.
        A game copies less, faster, when it knows what its actions change in place: it
        copies those parts onto a `shallow_copy` and replaces the others (`replace_item`)."""
        return _clone_for_apply(state)

    @cached_property
    def _check_action(self) -> Callable[[object], JsonObject]:
        return compile_action_check(self.action_schema)

    # ----- what a game implements ----------------------------------------------------
    @abstractmethod
    def _description(self) -> JsonObject:
        """The game's part of `describe()`: title, players, options, components, rules."""

    @abstractmethod
    def _setup(self, state: State, rng: Rng) -> None:
        """Fill a fresh state (game, version, num_players, options, seed, log, end are set)."""

    def _apply(self, state: State, action: Action, rng: Rng) -> None:
        """Apply a canonical action to a private copy, raising IllegalAction."""
        self.phases.apply(state, action, rng)

    @abstractmethod
    def _view(self, state: State, seat: int | None) -> Mapping[str, Any]:
        """The game-specific part of an observation: public state plus the seat's secrets
        (none for a spectator, `seat=None`)."""

    def _view_parts(self, state: State, seat: int | None, memo: Memo) -> Mapping[str, Any]:
        """`_view`, its costly parts as JSON kept in `memo` by the state parts they are made
        from (engines.observation_json); by default the view itself."""
        return self._view(state, seat)

    @abstractmethod
    def _result(self, state: State) -> Result:
        """Scores, ranks and details of a finished game (`Rules.result` adds the end)."""

    @abstractmethod
    def _determinize(self, observation: JsonObject, rng: Rng) -> State:
        """The game's part of `determinize`: num_players, options and the game's own keys,
        the hidden part drawn from `rng`."""


def check_seed(seed: object) -> None:
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63:
        raise InvalidSetup("seed must be an integer from 0 to 2**63 - 1")


def _clone_for_apply(state: State) -> State:
    """Deep copy, except that log entries are shared: they are never changed once logged."""
    copy: State = clone({k: v for k, v in state.items() if k != "log"})
    copy["log"] = list(state["log"])
    return copy


def shallow_copy(state: State) -> State:
    """A new state dict holding the same values but a new log list (at the end, where a deep
    copy puts it: a state's JSON keeps the order of its keys)."""
    copy = state.copy()  # faster than dict(state) on a dict that has lost keys
    log = copy.pop("log")
    copy["log"] = list(log)
    return copy


def replace_item(state: State, key: str, index: Any, value: Any) -> None:
    """`state[key][index] = value` on a copy of the list or dict `state[key]`, which takes
    its place: for the parts a state shares with the state before (`Rules._copy_for_apply`)."""
    part = state[key].copy()
    part[index] = value
    state[key] = part


def log_event(state: State, kind: str, fields: Mapping[str, Any] | None = None,
              private: Mapping[int, Mapping[str, Any]] | None = None) -> None:
    """Append the event `{"event": kind, **fields}`; `private` maps a seat to details only
    that seat sees.

    Logged entries are never changed afterwards (states share them between steps)."""
    entry: Event = {"event": kind, **(fields or {})}
    if private:
        entry["_private"] = {str(seat): dict(details) for seat, details in private.items()}
    state["log"].append(entry)


def end_game(state: State, reason: str, seat: int | None, text: str) -> None:
    """The game is over: phase "over", the end record set and logged."""
    end: End = {"reason": reason, "seat": seat, "text": text}
    state["phase"] = OVER
    state["end"] = end
    log_event(state, "end", end)


def visible_log(state: State, seat: int | None) -> list[Event]:
    """The log as `seat` knows it: public events with that seat's private details merged
    (a spectator, `seat=None`, gets the public events only). Entries without private
    details are the state's own (logged entries are never changed: read, do not modify);
    the others are new dicts."""
    key = None if seat is None else str(seat)
    # `visible_entry` written out: a call per entry costs ~15% of this on a long log
    return [event if "_private" not in event else _merged(event, key)
            for event in state["log"]]


def visible_entry(event: Event, key: str | None) -> Event:
    """One entry of `visible_log` (`key`: the seat as a string, None for a spectator)."""
    return event if "_private" not in event else _merged(event, key)


def log_from_view(log: Sequence[Event], seat: int | None,
                  private_fields: Mapping[str, tuple[str, ...]]) -> list[Event]:
    """A state's log rebuilt from `visible_log(state, seat)`: each entry's
    `private_fields[kind]` that it shows go back under `_private` for `seat`, so
    `visible_log` gives `log` back (other seats' private details are not in `log`)."""
    entries: list[Event] = clone(list(log))  # one round trip for the whole log
    for entry in entries:
        fields = private_fields.get(entry["event"])
        hidden = [key for key in fields if key in entry] if fields else None
        if hidden:
            private = {key: entry.pop(key) for key in hidden}
            if seat is not None:
                entry["_private"] = {str(seat): private}
    return entries


def _merged(event: Event, key: str | None) -> Event:
    """`event` without `_private`, with `key`'s details after its other fields. (A copy
    less the one key: a dict comprehension over the fields costs about four times more, on
    every private entry of every observation.)"""
    entry = event.copy()
    details = entry.pop("_private").get(key)
    if details:
        entry.update(details)
    return entry
