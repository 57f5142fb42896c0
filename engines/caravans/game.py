"""CaravansGame: setup, whose decision it is, and the order of the phases of a turn."""

from __future__ import annotations

from engines.base import Action, Game, State, log_event
from engines.errors import IllegalAction
from engines.rng import Rng

from . import actions, bidding, scoring, view
from .data import (
    CARDS,
    COLOURS,
    FREE_ROUTES,
    MAP_ROUTES,
    ROUTES,
    STARTING_CARDS,
    STARTING_GOLD,
    components,
)
from .routes import check_route_in_play, place_route
from .schemas import ACTIONS, OBSERVATION


class CaravansGame(Game):
    """Caravans of Ahldarahd for 2 to 4 players."""

    name = "caravans"
    version = "2"
    min_players = 2
    max_players = 4
    action_schema = ACTIONS
    observation_schema = OBSERVATION
    open_action_types = frozenset({"offer_trade"})

    def _description(self) -> dict:
        return {
            "name": self.name,
            "title": "Caravans of Ahldarahd",
            "players": [self.min_players, self.max_players],
            "options": {},
            "components": components(),
            "open_action_types": sorted(self.open_action_types),
        }

    # ----- setup --------------------------------------------------------------------
    def _setup(self, state: State, rng: Rng) -> None:
        n = state["num_players"]
        colours = list(COLOURS[:n])
        piles = {c: [card["id"] for card in CARDS if card["colour"] == c] for c in colours}
        for pile in piles.values():
            rng.shuffle(pile)
        hands = [piles[c][:STARTING_CARDS] for c in colours]
        state.update(
            colours=colours,
            phase="setup",
            turn=0,
            final_turn=False,
            end_reason=None,
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
        log_event(state, {"event": "setup", "gold": STARTING_GOLD, "rop": dict(state["rop"]),
                          "shah": 0, "deck": len(state["deck"])},
                  private={seat: {"hand": sorted(hand)} for seat, hand in enumerate(hands)})

    # ----- whose decision -----------------------------------------------------------
    def current_seat(self, state: State) -> int | None:
        phase = state["phase"]
        if phase == "setup":
            return state["setup_queue"][0]
        if phase == "bidding":
            return bidding.bidding_current_seat(state)
        if phase == "actions":
            return actions.actions_current_seat(state)
        return None

    def legal_actions(self, state: State) -> list[Action]:
        phase = state["phase"]
        if phase == "setup":
            seat = state["setup_queue"][0]
            own = MAP_ROUTES[state["colours"][seat]]
            return [{"type": "free_route", "route": r} for r in own if state["owner"][r] is None]
        if phase == "bidding":
            return bidding.bidding_legal_actions(state)
        if phase == "actions":
            return actions.actions_legal_actions(state)
        return []

    # ----- moves --------------------------------------------------------------------
    def _apply(self, state: State, action: Action, rng: Rng) -> None:
        phase = state["phase"]
        if phase == "setup":
            self._free_route(state, action)
        elif phase == "bidding":
            bidding.apply_bidding(state, action)
        else:
            actions.apply_actions(state, action)
        self._advance_phases(state)

    def _free_route(self, state: State, action: Action) -> None:
        if action["type"] != "free_route":
            raise IllegalAction("the game starts with everyone building two free routes "
                                '("free_route") on their own map')
        seat = state["setup_queue"][0]
        route = action["route"]
        check_route_in_play(state, route)
        if ROUTES[route]["map"] != state["colours"][seat]:
            raise IllegalAction("the two free routes are built on your own map")
        if state["owner"][route] is not None:
            raise IllegalAction(f"route {route} is already built")
        state["setup_queue"].pop(0)
        log_event(state, {"event": "free_route", "seat": seat, "route": route})
        place_route(state, seat, route)

    def _advance_phases(self, state: State) -> None:
        """Move on once a phase is complete: setup -> turns of bidding and actions -> over."""
        if state["phase"] == "setup" and not state["setup_queue"]:
            bidding.start_turn(state)
        if state["phase"] == "bidding" and bidding.bidding_finished(state):
            bidding.discard_unsold_cards(state)
            actions.start_action_phase(state)
        if state["phase"] == "actions" and actions.actions_finished(state):
            self._end_turn(state)

    def _end_turn(self, state: State) -> None:
        if state["final_turn"] or not state["actions"]["acted"]:
            state["phase"] = "over"
            state["end_reason"] = "deck_exhausted" if state["final_turn"] else "no_actions"
            log_event(state, {"event": "game_over", "reason": state["end_reason"]})
            return
        bidding.start_turn(state)

    # ----- views and results --------------------------------------------------------
    def _view(self, state: State, seat: int | None) -> dict:
        return view.view(state, seat)

    def hidden_variant(self, state: State, seat: int, rng: Rng) -> State:
        return view.hidden_variant(state, seat, rng)

    def _result(self, state: State) -> dict:
        return scoring.result(state)
