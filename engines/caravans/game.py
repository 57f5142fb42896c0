"""Caravans of Ahldarahd: setup, and the order of play (flow) around the moves (actions)."""

from __future__ import annotations

from typing import Any

from engines.base import Rules, log_event
from engines.rng import Rng
from engines.types import Action, JsonObject, Result, State
from engines.view_memo import Memo

from . import flow, scoring, view
from .actions import PHASES
from .components import CARDS, COLOURS, FREE_ROUTES, MAP_ROUTES, STARTING_CARDS, STARTING_GOLD
from .copies import copy_for_apply
from .describe import OPEN_ACTION_TYPES, description
from .determinize import PRIVATE_EVENT_FIELDS, determinize
from .schemas import ACTIONS, OBSERVATION


class CaravansGame(Rules):
    """Caravans of Ahldarahd for 2 to 4 players."""

    name = "caravans"
    version = "3"
    min_players = 2
    max_players = 4
    action_schema = ACTIONS
    observation_schema = OBSERVATION
    open_action_types = OPEN_ACTION_TYPES
    phases = PHASES
    private_event_fields = PRIVATE_EVENT_FIELDS

    def _description(self) -> JsonObject:
        return description()

    def _setup(self, state: State, rng: Rng) -> None:
        n = state["num_players"]
        colours = list(COLOURS[:n])
        piles = {c: [card["id"] for card in CARDS if card["colour"] == c] for c in colours}
        for pile in piles.values():
            rng.shuffle(pile)
        hands = [piles[c][:STARTING_CARDS] for c in colours]
        state.update(
            colours=colours,
            phase=flow.SETUP,
            turn=0,
            final_turn=False,
            gold=[STARTING_GOLD] * n,
            camel_up=[True] * n,
            hands=hands,
            known=[[] for _ in colours],
            deck=[card for c in colours for card in piles[c][STARTING_CARDS:]],
            face_up=[],
            discard=[],
            owner={r: None for c in colours for r in MAP_ROUTES[c]},
            control={},
            rop={colours[(i + 1) % n]: i for i in range(n)},
            shah=0,
            eyes=None,
            pirate_queen=None,
            setup_queue=[seat for seat in range(n) for _ in range(FREE_ROUTES)],
        )
        log_event(state, "setup", {"gold": STARTING_GOLD, "rop": dict(state["rop"]), "shah": 0,
                                   "deck": len(state["deck"])},
                  private={seat: {"hand": sorted(hand)} for seat, hand in enumerate(hands)})

    def _copy_for_apply(self, state: State) -> State:
        return copy_for_apply(state)

    def current_seat(self, state: State) -> int | None:
        return flow.current_seat(state)

    def _apply(self, state: State, action: Action, rng: Rng) -> None:
        super()._apply(state, action, rng)
        flow.advance(state)

    def _view(self, state: State, seat: int | None) -> view.View:
        return view.view(state, seat)

    def _view_parts(self, state: State, seat: int | None, memo: Memo) -> dict[str, Any]:
        return view.view_parts(state, seat, memo)

    def hidden_variant(self, state: State, seat: int, rng: Rng) -> State:
        return view.hidden_variant(state, seat, rng)

    def _result(self, state: State) -> Result:
        return scoring.result(state)

    def _determinize(self, observation: JsonObject, rng: Rng) -> State:
        return determinize(observation, rng)
