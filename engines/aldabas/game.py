"""Aldabas: Doors of Cartagena, multiplayer (2-4) and the Solidad solo mode."""

from __future__ import annotations

from typing import Any

from engines.base import OVER, Rules, log_event
from engines.errors import InvalidSetup
from engines.rng import Rng
from engines.types import JsonObject, Result, State, Variant
from engines.view_memo import Memo

from . import scoring
from .actions import PHASES
from .components import (
    CARD_TYPE,
    COINS_PER_PLAYER,
    FULL_DECK,
    MULTI_DOCK_COSTS,
    RIVAL_HAND,
    SOLO_DECK,
    SOLO_DOCK_COSTS,
    SOLO_SUPPLY,
    STARTING_HAND,
)
from .copies import copy_for_apply
from .describe import MAX_EXTRA, description
from .determinize import PRIVATE_EVENT_FIELDS, determinize
from .flow import start_setup
from .schemas import ACTIONS, OBSERVATION
from .table import RivalHolder, deal, draw, new_holder
from .view import View, hidden_variant, seat_view, view_parts

RIVAL_GOALS = 3
SOLO_OPTIONS = {"rival_extra_hand": 0, "extra_supply": 0}


def draw_goals(state: State, rng: Rng) -> list[int]:
    """Draw until three different Aldabas show; the other drawn cards go back, shuffled."""
    goals: list[int] = []
    returned: list[int] = []
    while len(goals) < RIVAL_GOALS:
        card = deal(state)
        seen = {CARD_TYPE[g].aldaba for g in goals}
        (returned if CARD_TYPE[card].aldaba in seen else goals).append(card)
    state["deck"].extend(returned)
    rng.shuffle(state["deck"])
    return goals


class AldabasGame(Rules):
    name = "aldabas"
    version = "2.0.0"
    min_players = 1
    max_players = 4
    action_schema = ACTIONS
    observation_schema = OBSERVATION
    phases = PHASES
    private_event_fields = PRIVATE_EVENT_FIELDS

    # ----- setup ---------------------------------------------------------------------------
    def variants(self) -> list[Variant]:
        multi: list[Variant] = [{"num_players": n, "options": {"mode": "multi"}}
                                for n in (2, 3, 4)]
        return [*multi, {"num_players": 1, "options": {"mode": "solo"}}]

    def normalize_options(self, num_players: int, options: JsonObject) -> JsonObject:
        mode = options.pop("mode", "multi")
        if mode == "multi":
            if options:
                raise InvalidSetup(f"multiplayer Aldabas takes no options {sorted(options)}")
            self.check_player_count(num_players, 2, 4)
            return {"mode": "multi"}
        if mode != "solo":
            raise InvalidSetup(f'option "mode" must be "multi" or "solo", not {mode!r}')
        self.check_player_count(num_players, 1, 1)
        unknown = set(options) - set(SOLO_OPTIONS)
        if unknown:
            raise InvalidSetup(f"unknown solo options {sorted(unknown)}")
        normal = {"mode": "solo", **SOLO_OPTIONS, **options}
        for key in SOLO_OPTIONS:
            value = normal[key]
            if not isinstance(value, int) or isinstance(value, bool) or not (
                0 <= value <= MAX_EXTRA
            ):
                raise InvalidSetup(f'option "{key}" must be an integer from 0 to {MAX_EXTRA}')
        return normal

    def _setup(self, state: State, rng: Rng) -> None:
        solo = state["options"]["mode"] == "solo"
        costs = SOLO_DOCK_COSTS if solo else MULTI_DOCK_COSTS
        state.update(
            mode=state["options"]["mode"],
            deck=list(SOLO_DECK if solo else FULL_DECK),
            discard=[],
            costs=list(costs),
            dock=[None] * len(costs),
            supply=(SOLO_SUPPLY + state["options"]["extra_supply"] if solo
                    else COINS_PER_PLAYER * state["num_players"]),
            box_used=0,
            players=[new_holder() for _ in range(state["num_players"])],
            rival=None,
            end_trigger=None,
            active=0,
            phase="setup_vault",
            power=None,
            pending_powers=[],
            actions_left=0,
            turn_number=0,
        )
        rng.shuffle(state["deck"])
        if solo:
            self._setup_rival(state, rng)
        for holder in state["players"]:
            holder["hand"] = [deal(state) for _ in range(STARTING_HAND)]
        log_event(state, "setup", {"mode": state["mode"], "supply": state["supply"]},
                  private={n: {"hand": list(p["hand"])} for n, p in enumerate(state["players"])})
        start_setup(state, 0)

    def _setup_rival(self, state: State, rng: Rng) -> None:
        """Solo setup steps 3 to 6: the four-slot Dock, Goals, the Rival's vault and hand."""
        state["dock"] = [draw(state) for _ in state["costs"]]
        extra = state["options"]["rival_extra_hand"]
        rival: RivalHolder = {**new_holder(), "goals": draw_goals(state, rng)}
        rival["vault_cards"] = [deal(state)]
        rival["hand"] = [deal(state) for _ in range(RIVAL_HAND + extra)]
        state["rival"] = rival
        log_event(state, "rival_setup", {"goals": list(rival["goals"]),
                                         "hand": list(rival["hand"]),
                                         "dock": list(state["dock"])})

    # ----- play ----------------------------------------------------------------------------
    def _copy_for_apply(self, state: State) -> State:
        return copy_for_apply(state)

    def current_seat(self, state: State) -> int | None:
        seat: int | None = None if state["phase"] == OVER else state["active"]
        return seat

    def _view(self, state: State, seat: int | None) -> View:
        return seat_view(state, seat)

    def _view_parts(self, state: State, seat: int | None, memo: Memo) -> dict[str, Any]:
        return view_parts(state, seat, memo)

    def hidden_variant(self, state: State, seat: int, rng: Rng) -> State:
        return hidden_variant(state, seat, rng)

    def _result(self, state: State) -> Result:
        return scoring.result(state)

    def _description(self) -> JsonObject:
        return description()

    def _determinize(self, observation: JsonObject, rng: Rng) -> State:
        return determinize(observation, rng)
