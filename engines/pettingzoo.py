"""The games as PettingZoo AEC environments (issue 30).

    import engines.pettingzoo

    env = engines.pettingzoo.env("aldabas", num_players=3)   # options too: mode="solo"
    env.reset(seed=7)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        mask = observation["action_mask"]
        env.step(None if termination or truncation else env.action_space(agent).sample(mask))

- **Agents** `player_0`, `player_1`...: one per seat (Aldabas solo: one), the one to move
  in `agent_selection` (the games' turn order, not always round robin).
- **Actions**: `Discrete(N)` over the game's fixed index space (`engines.action_space`, the
  same as OpenSpiel's); `env.action(index)` is the engine's JSON action. An index outside
  the mask raises `engines.IllegalAction` (an illegal-move policy is a wrapper's business,
  such as PettingZoo's TerminateIllegalWrapper).
- **Observations**: `{"observation": engines.tensor.of(game) of the seat's observation,
  "action_mask": int8 mask of its legal actions}` (all zeros when not its turn);
  `env.engine_observation(agent)` is the engine's JSON observation.
- **Rewards** are 0 until the end, then `engines.rewards` (zero-sum spread by rank; solo: a
  share of the best band's score); every agent terminates together, none is truncated.
- **Seeding**: `reset(seed=s)` plays the deal of `new_game(seed=s)`; a later `reset()`
  without a seed takes the next of a series drawn from `s` (an env never seeded draws its
  first from the operating system, as gymnasium's do). `reset`'s `options` are ignored:
  the game's options are the env's. No rendering (`render_mode` None).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import logger, spaces
from pettingzoo import AECEnv

import engines
from engines import action_space, rewards, tensor
from engines.errors import IllegalAction
from engines.types import JsonObject, State

Observation = dict[str, npt.NDArray[Any]]


def env(game: str, num_players: int = 2, render_mode: str | None = None, **options: Any
        ) -> GameEnv:
    """The AEC environment of `game` for `num_players` with the game's `options`."""
    return GameEnv(game, num_players, options, render_mode)


class GameEnv(AECEnv[str, Observation, int | None]):  # type: ignore[misc]  # untyped
    metadata = {"render_modes": [], "is_parallelizable": False}

    def __init__(self, game: str, num_players: int, options: JsonObject,
                 render_mode: str | None = None):
        super().__init__()
        if render_mode is not None:
            raise ValueError("these environments do not render (render_mode None)")
        self.render_mode = render_mode
        self.game = engines.get(game)
        self.num_players = num_players
        self.options = self.game.normalize_options(num_players, dict(options))
        self.metadata = {**self.metadata, "name": f"{game}_v0"}
        self.space = action_space.of(game)
        self.encoder = tensor.of(game)
        seats = self.game.seats(self.game.new_game(num_players, 0, self.options))
        self.possible_agents = [f"player_{seat}" for seat in range(seats)]
        self.observation_spaces = {agent: spaces.Dict({
            "observation": spaces.Box(self.encoder.low, self.encoder.high, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (len(self.space),), dtype=np.int8),
        }) for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(len(self.space))
                              for agent in self.possible_agents}
        self._seeds = random.Random()
        self._state: State | None = None
        self._observations: dict[int, JsonObject] = {}
        self._legal: list[int] = []

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    @property
    def engine_state(self) -> State:
        """The engine's state of the match (reset first; do not change it)."""
        if self._state is None:
            raise IllegalAction("reset the environment first")
        return self._state

    def action(self, index: int) -> JsonObject:
        """The engine's action numbered `index`."""
        return self.space.action(int(index))

    def engine_observation(self, agent: str) -> JsonObject:
        """The engine's JSON observation of `agent`'s seat."""
        seat = self.possible_agents.index(agent)
        if seat not in self._observations:
            self._observations[seat] = self.game.observation(self.engine_state, seat)
        return self._observations[seat]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._seeds = random.Random(seed)
        engine_seed = seed if seed is not None else self._seeds.getrandbits(63)
        self._enter(self.game.new_game(self.num_players, engine_seed, self.options))
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = self._agent_to_move()

    def observe(self, agent: str) -> Observation:
        mask = np.zeros(len(self.space), np.int8)
        if agent == self.agent_selection and not self.terminations[agent]:
            mask[self._legal] = 1
        return {"observation": self.encoder.encode(self.engine_observation(agent)),
                "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None or int(action) not in self._legal:
            raise IllegalAction(f"action {action} is not in {agent}'s action mask")
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self._enter(self.game.apply(self.engine_state, self.space.action(int(action))))
        if self.game.is_over(self.engine_state):
            for other, reward in zip(self.agents, rewards.rewards(self.game, self.engine_state),
                                     strict=True):
                self.rewards[other] = reward
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.agent_selection = self._agent_to_move()
        self._accumulate_rewards()

    def render(self) -> None:
        logger.warn("these environments do not render (render_mode None)")

    def close(self) -> None:
        """Nothing to release."""

    def _enter(self, state: State) -> None:
        self._state = state
        self._observations = {}
        self._legal = self.space.indices(self.game.legal_actions(state))

    def _agent_to_move(self) -> str:
        seat = self.game.current_seat(self.engine_state)
        return self.possible_agents[seat if seat is not None else 0]
