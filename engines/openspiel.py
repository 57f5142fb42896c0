"""The games as OpenSpiel games (issue 30): `import engines.openspiel` registers
`python_aladino`, `python_aldabas` and `python_caravans` with pyspiel.

    import pyspiel
    import engines.openspiel

    game = pyspiel.load_game("python_aldabas", {"players": 3})   # or {"mode": "solo", "players": 1}
    state = game.new_initial_state()

Parameters: `players` (default 2) and, for Aldabas, `mode` ("multi" or "solo"; solo is
played by `players=1`). Sequential games of imperfect information with explicit chance:

- **Actions** are the game's fixed index space (`engines.action_space.of(name)`): the same
  numbers in every setup; `state.action(index)` is the engine's JSON action.
- **Chance.** The engines draw from a generator seeded by the match seed. The game starts
  with `SEED_BYTES` chance nodes of 256 equally likely outcomes each, the bytes of the seed
  (below 2**32) `new_game` deals with: every state after them is the engine's state for that
  seed and the actions since. That is the whole of the chance of Aldabas and Caravans (the
  deal: the deck's order, the hands). Aladino also rolls its die in play: after each action
  whose resolution rolls it, a chance node with the four faces decides the roll, and the
  engine's generator is set so that it shows that face (`_forced`), so no roll is decided
  before its node.
- **Information state**: the canonical JSON of the seat's observation, which includes its
  log (perfect recall); the observation string is the same without the log; the
  observation tensor is `engines.tensor.of(name)`. An observer asked for public
  information only gets the spectator's view.
- **`resample_from_infostate(player, sampler)`** is `game.determinize(observation, seed)`
  with a seed drawn from `sampler`: every hidden assignment the observation allows has a
  chance, the way the real game deals (the seed nodes reach only 2**32 deals; the
  determinized state need not be one of them, so its `history()` is empty).
- **Returns** at the end: `engines.rewards` (zero-sum spread by rank; solo: a share of the
  best band's score).

States share the engine's immutable states between clones (OpenSpiel clones by deep copy),
and each node computes its legal actions, observations and strings once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
import orjson
import pyspiel

import engines
from engines import action_space, rewards, tensor
from engines.base import Game
from engines.rng import Rng
from engines.types import Action, JsonObject, State

SEED_BYTES = 4
SEED_OUTCOMES = [(byte, 1 / 256) for byte in range(256)]
MAX_FORCING_TRIES = 1000
"""Generator states tried to make a die show a face (each does with chance 1/4)."""


@dataclass(frozen=True)
class InPlayChance:
    """A draw a game makes in play, as a chance node: the log event that shows it and the
    field with the outcome, and the outcomes, equally likely."""

    event: str
    field: str
    outcomes: tuple[int, ...]


IN_PLAY_CHANCE = {"aladino": InPlayChance("roll", "value", (1, 2, 3, 4))}
"""The games that draw after the deal (tests/engines/test_openspiel.py checks the others
never do)."""


@dataclass(frozen=True)
class Setup:
    """What every state of one loaded game shares."""

    engine: Game
    num_players: int
    options: JsonObject
    space: action_space.ActionSpace
    encoder: tensor.Encoder
    chance: InPlayChance | None

    def __deepcopy__(self, memo: dict[int, Any]) -> Setup:
        return self

    def action_text(self, index: int) -> str:
        """The action's JSON, as `action_to_string` gives it."""
        return _action_text(self.space, index)


@lru_cache(maxsize=2**16)
def _action_text(space: action_space.ActionSpace, index: int) -> str:
    return orjson.dumps(space.action(index)).decode()


@dataclass(frozen=True)
class Node:
    """One node of the game tree; never changed once made, so clones share it. `state` is
    None while the seed is drawn; `pending` is an action whose die roll a chance node
    decides (the player it belongs to has chosen it; `state` is before it)."""

    setup: Setup
    seed: tuple[int, ...] = ()
    state: State | None = None
    pending: Action | None = None
    _cache: dict[Any, Any] = field(default_factory=dict, compare=False)

    def __deepcopy__(self, memo: dict[int, Any]) -> Node:
        return self

    @cached_property
    def player(self) -> int:
        if self.state is None or self.pending is not None:
            return int(pyspiel.PlayerId.CHANCE)
        seat = self.setup.engine.current_seat(self.state)
        return int(pyspiel.PlayerId.TERMINAL) if seat is None else seat

    @cached_property
    def legal(self) -> list[int]:
        if self.state is None or self.player < 0:
            return []
        return sorted(self.setup.space.indices(self.setup.engine.legal_actions(self.state)))

    @cached_property
    def returns(self) -> list[float]:
        if self.player != pyspiel.PlayerId.TERMINAL or self.state is None:
            return [0.0] * self.setup.num_players
        return rewards.rewards(self.setup.engine, self.state)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        chance = self.setup.chance
        if self.state is None or chance is None:
            return SEED_OUTCOMES if self.state is None else []
        return [(index, 1 / len(chance.outcomes)) for index in range(len(chance.outcomes))]

    # ----- moving on ------------------------------------------------------------------
    def child(self, index: int) -> Node:
        """The node after `index`; the last one is remembered (a clone applying the same
        action, as OpenSpiel's tests do, shares it)."""
        last = self._cache.get("child")
        if last is not None and last[0] == index:
            child: Node = last[1]
            return child
        child = self._child(index)
        self._cache["child"] = (index, child)
        return child

    def _child(self, index: int) -> Node:
        state, chance = self.state, self.setup.chance
        if state is None:
            return self._dealt(index)
        if self.pending is not None and chance is not None:
            return Node(self.setup, state=self._forced(state, self.pending, chance, index))
        action = self.setup.space.action(index)
        after = self.setup.engine.apply(state, action)
        if chance is not None and _drawn(chance, state, after):
            node = Node(self.setup, state=state, pending=action)
            node._cache["tried", state["rng"]] = after
            return node
        return Node(self.setup, state=after)

    def _dealt(self, byte: int) -> Node:
        seed = (*self.seed, byte)
        if len(seed) < SEED_BYTES:
            return Node(self.setup, seed=seed)
        number = sum(value << (8 * place) for place, value in enumerate(seed))
        setup = self.setup
        return Node(setup, seed=seed,
                    state=setup.engine.new_game(setup.num_players, number, setup.options))

    def _forced(self, state: State, action: Action, chance: InPlayChance, index: int
                ) -> State:
        """The state after `action` in which the draw shows outcome `index`: the first of
        a fixed series of generator states that makes it so (the series starts with the
        state's own generator)."""
        wanted = chance.outcomes[index]
        candidates = Rng(state["rng"])
        generator = state["rng"]
        for _ in range(MAX_FORCING_TRIES):
            after = self._cache.get(("tried", generator))
            if after is None:
                after = self.setup.engine.apply({**state, "rng": generator}, action)
                self._cache["tried", generator] = after
            drawn = _drawn(chance, state, after)
            if drawn and drawn[0][chance.field] == wanted:
                return after
            generator = candidates.next64()
        raise RuntimeError(f"no generator state made {chance.event} show {wanted}")

    # ----- what a player sees ---------------------------------------------------------
    def observation(self, seat: int | None) -> JsonObject | None:
        if self.state is None:
            return None
        key = ("observation", seat)
        if key not in self._cache:
            self._cache[key] = self.setup.engine.observation(self.state, seat)
        observation: JsonObject = self._cache[key]
        return observation

    def text(self, seat: int | None, with_log: bool) -> str:
        """The observation's canonical JSON (with the pending action, if any)."""
        key = ("text", seat, with_log)
        if key not in self._cache:
            observation = self.observation(seat)
            if observation is None:
                self._cache[key] = "the seed is being drawn"
            else:
                shown = observation if with_log else {
                    k: v for k, v in observation.items() if k != "log"}
                if self.pending is not None:
                    shown = {**shown, "pending": self.pending}
                self._cache[key] = orjson.dumps(shown, option=orjson.OPT_SORT_KEYS).decode()
        text: str = self._cache[key]
        return text

    def vector(self, seat: int | None) -> tensor.Vector:
        key = ("vector", seat)
        if key not in self._cache:
            observation = self.observation(seat)
            self._cache[key] = (np.zeros(self.setup.encoder.size, np.float32)
                                if observation is None else
                                self.setup.encoder.encode(observation))
        vector: tensor.Vector = self._cache[key]
        return vector

    @cached_property
    def dump(self) -> str:
        if self.state is None:
            return f"drawing the seed: {list(self.seed)}"
        pending = "" if self.pending is None else f" (pending {dict(self.pending)})"
        return orjson.dumps(self.state, option=orjson.OPT_SORT_KEYS).decode() + pending


def _drawn(chance: InPlayChance, before: State, after: State) -> list[JsonObject]:
    """The draws logged from `before` to `after` (one at most: one chance node)."""
    drawn = [event for event in after["log"][len(before["log"]):]
             if event["event"] == chance.event]
    if len(drawn) > 1:
        raise ValueError(f"one action drew {len(drawn)} times: {chance.event} is one node")
    return drawn


class EngineState(pyspiel.State):  # type: ignore[misc]  # pyspiel is untyped
    """One match of an engine game, as OpenSpiel sees it."""

    def __init__(self, game: EngineGame, node: Node | None = None):
        super().__init__(game)
        self._node = node or Node(game.setup)

    @property
    def node(self) -> Node:
        return self._node

    @property
    def engine_state(self) -> State | None:
        """The engine's state (None while the seed is drawn; do not change it)."""
        return self._node.state

    def action(self, index: int) -> JsonObject:
        """The engine's action numbered `index`."""
        return self._node.setup.space.action(index)

    def current_player(self) -> int:
        return self._node.player

    def _legal_actions(self, player: int) -> list[int]:
        return list(self._node.legal)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return list(self._node.chance_outcomes())

    def _apply_action(self, action: int) -> None:
        self._node = self._node.child(action)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self._node.state is None:
                return f"seed byte {len(self._node.seed)}: {action}"
            chance = self._node.setup.chance
            return f"{chance.event}: {chance.outcomes[action]}" if chance else str(action)
        return self._node.setup.action_text(action)

    def is_terminal(self) -> bool:
        return self._node.player == int(pyspiel.PlayerId.TERMINAL)

    def returns(self) -> list[float]:
        return list(self._node.returns)

    def resample_from_infostate(self, player_id: int, probability_sampler: Callable[[], float]
                                ) -> EngineState:
        """A state `player_id` can not tell from this one, its hidden part drawn by
        `game.determinize` with a seed from `probability_sampler` (uniform in [0, 1))."""
        node = self._node
        observation = node.observation(player_id)
        if observation is None:
            clone: EngineState = self.clone()
            return clone
        seed = int(probability_sampler() * 2**53)
        state = node.setup.engine.determinize(observation, seed)
        return EngineState(self.get_game(), Node(node.setup, state=state, pending=node.pending))

    def __str__(self) -> str:
        return self._node.dump


class EngineObserver:
    """OpenSpiel's Python observer: strings and tensors of what a player sees (the
    spectator's view when only public information is asked for)."""

    def __init__(self, setup: Setup, iig_obs_type: Any):
        self.private = iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
        self.with_log = bool(iig_obs_type.perfect_recall)
        self.tensor = None if self.with_log else np.zeros(setup.encoder.size, np.float32)
        self.dict = {} if self.tensor is None else {"observation": self.tensor}

    def _seat(self, player: int) -> int | None:
        return player if self.private else None

    def set_from(self, state: EngineState, player: int) -> None:
        if self.tensor is not None:
            self.tensor[:] = state.node.vector(self._seat(player))

    def string_from(self, state: EngineState, player: int) -> str:
        return state.node.text(self._seat(player), self.with_log)


class EngineGame(pyspiel.Game):  # type: ignore[misc]  # pyspiel is untyped
    """An engine game with its parameters (`players`, Aldabas `mode`)."""

    def __init__(self, name: str, params: dict[str, Any]):
        engine = engines.get(name)
        players = int(params.get("players", 2))
        options = engine.normalize_options(players, _options(name, params))
        seats = engine.seats(engine.new_game(players, 0, options))
        low, high = rewards.bounds(seats)
        self.setup = Setup(engine, players, options, action_space.of(name), tensor.of(name),
                           IN_PLAY_CHANCE.get(name))
        info = pyspiel.GameInfo(
            num_distinct_actions=len(self.setup.space),
            max_chance_outcomes=len(SEED_OUTCOMES),
            num_players=players,
            min_utility=low,
            max_utility=high,
            utility_sum=0.0 if seats > 1 else None,
            max_game_length=action_space.max_decisions(name, players, options))
        super().__init__(game_type(name, zero_sum=seats > 1), info, params)

    def new_initial_state(self) -> EngineState:
        return EngineState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> EngineObserver:
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        return EngineObserver(self.setup,
                              iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False))


def _options(name: str, params: dict[str, Any]) -> JsonObject:
    unknown = set(params) - set(PARAMETERS[name])
    if unknown:
        raise ValueError(f"python_{name} has no parameters {sorted(unknown)}")
    return {"mode": params["mode"]} if "mode" in params else {}


PARAMETERS: dict[str, dict[str, Any]] = {
    "aladino": {"players": 2},
    "aldabas": {"players": 2, "mode": "multi"},
    "caravans": {"players": 2},
}


def game_type(name: str, zero_sum: bool = True) -> Any:
    """The pyspiel.GameType of `python_<name>` (solo: general-sum)."""
    engine = engines.get(name)
    return pyspiel.GameType(
        short_name=f"python_{name}",
        long_name=f"Python {engine.describe()['title']}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=(pyspiel.GameType.Utility.ZERO_SUM if zero_sum
                 else pyspiel.GameType.Utility.GENERAL_SUM),
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=engine.max_players,
        min_num_players=engine.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=PARAMETERS[name])


class AladinoGame(EngineGame):
    def __init__(self, params: dict[str, Any] | None = None):
        super().__init__("aladino", params or {})


class AldabasGame(EngineGame):
    def __init__(self, params: dict[str, Any] | None = None):
        super().__init__("aldabas", params or {})


class CaravansGame(EngineGame):
    def __init__(self, params: dict[str, Any] | None = None):
        super().__init__("caravans", params or {})


GAMES = {"aladino": AladinoGame, "aldabas": AldabasGame, "caravans": CaravansGame}
"""One class per game, the creators pyspiel keeps: with a closure as creator the
interpreter aborted at exit (pybind11 freed it without the GIL); classes, as OpenSpiel's own
Python games register, do not."""
for _name, _game in GAMES.items():
    pyspiel.register_game(game_type(_name), _game)
