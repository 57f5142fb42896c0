"""Aladino y la cueva de las maravillas: rulebook 002 with the decisions of rules/aladino.md."""

from __future__ import annotations

from engines.base import OVER, Rules
from engines.rng import Rng
from engines.types import JsonObject, Result, State
from engines.view_memo import Memo

from . import flow, scoring, view
from .actions import PHASES
from .components import ALADDIN, TOKENS
from .copies import copy_for_apply
from .describe import description
from .determinize import determinize
from .schemas import ACTIONS, OBSERVATION


class AladinoGame(Rules):
    name = "aladino"
    version = "2.0.0"
    min_players = 2
    max_players = 4
    action_schema = ACTIONS
    observation_schema = OBSERVATION
    phases = PHASES

    def _description(self) -> JsonObject:
        return description()

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
        flow.start_turn(state, rng, seat=0)

    def _copy_for_apply(self, state: State) -> State:
        return copy_for_apply(state)

    def current_seat(self, state: State) -> int | None:
        seat: int | None = None if state["phase"] == OVER else state["turn"]
        return seat

    def _view(self, state: State, seat: int | None) -> view.View:
        return view.view(state)

    def _view_parts(self, state: State, seat: int | None, memo: Memo) -> view.View:
        return view.view_parts(state, memo)

    def _result(self, state: State) -> Result:
        return scoring.result(state)

    def _determinize(self, observation: JsonObject, rng: Rng) -> State:
        return determinize(observation, rng)

    def hidden_variant(self, state: State, seat: int, rng: Rng) -> State:
        return view.hidden_variant(state, rng)
