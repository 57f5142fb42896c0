"""Aldabas: Doors of Cartagena, multiplayer (2-4) and the Solidad solo mode."""

from __future__ import annotations

from engines.base import Action, Game, State, log_event, ranks_from_scores
from engines.errors import InvalidSetup
from engines.rng import Rng

from .actions import apply_action, legal
from .block import COLS, ROWS
from .cards import CARD_TYPE, COLOURS, FULL_DECK, SOLO_DECK, card_table, type_table
from .describe import MAX_EXTRA, description
from .flow import start_setup
from .schemas import ACTIONS, OBSERVATION
from .scoring import band, rival_summary, score_holders
from .table import COINS_PER_PLAYER, MULTI_DOCK_COSTS, SOLO_DOCK_COSTS, SOLO_SUPPLY, draw
from .view import hidden_variant, seat_view

STARTING_HAND = 5
RIVAL_HAND = 2
RIVAL_GOALS = 3
SOLO_OPTIONS = {"rival_extra_hand": 0, "extra_supply": 0}


def new_holder() -> dict:
    return {"hand": [], "vault_cards": [], "vault_coins": 0, "purse": 0,
            "block": [None] * (COLS * ROWS), "coins": [0] * (COLS * ROWS)}


def draw_goals(state: State, rng: Rng) -> list[int]:
    """Draw until three different Aldabas show; the other drawn cards go back, shuffled."""
    goals: list[int] = []
    returned: list[int] = []
    while len(goals) < RIVAL_GOALS:
        card = draw(state)
        seen = {CARD_TYPE[g].aldaba for g in goals}
        (returned if CARD_TYPE[card].aldaba in seen else goals).append(card)
    state["deck"].extend(returned)
    rng.shuffle(state["deck"])
    return goals


class AldabasGame(Game):
    name = "aldabas"
    version = "1.1.0"
    min_players = 1
    max_players = 4
    action_schema = ACTIONS
    observation_schema = OBSERVATION

    # ----- setup ---------------------------------------------------------------------------
    def variants(self) -> list[dict]:
        multi = [{"num_players": n, "options": {"mode": "multi"}} for n in (2, 3, 4)]
        return [*multi, {"num_players": 1, "options": {"mode": "solo"}}]

    def normalize_options(self, num_players: int, options: dict) -> dict:
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
            ending=None,
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
            holder["hand"] = [draw(state) for _ in range(STARTING_HAND)]
        log_event(state, {"event": "setup", "mode": state["mode"], "supply": state["supply"]},
                  private={n: {"hand": list(p["hand"])} for n, p in enumerate(state["players"])})
        start_setup(state, 0)

    def _setup_rival(self, state: State, rng: Rng) -> None:
        """Solo setup steps 3 to 6: the four-slot Dock, Goals, the Rival's vault and hand."""
        state["dock"] = [draw(state) for _ in state["costs"]]
        rival = new_holder()
        rival["goals"] = draw_goals(state, rng)
        rival["vault_cards"] = [draw(state)]
        extra = state["options"]["rival_extra_hand"]
        rival["hand"] = [draw(state) for _ in range(RIVAL_HAND + extra)]
        state["rival"] = rival
        log_event(state, {"event": "rival_setup", "goals": rival["goals"],
                          "hand": rival["hand"], "dock": list(state["dock"])})

    # ----- play ----------------------------------------------------------------------------
    def current_seat(self, state: State) -> int | None:
        return None if state["phase"] == "over" else state["active"]

    def legal_actions(self, state: State) -> list[Action]:
        return legal(state)

    def _apply(self, state: State, action: Action, rng: Rng) -> None:
        apply_action(state, action)

    def _view(self, state: State, seat: int | None) -> dict:
        return seat_view(state, seat)

    def hidden_variant(self, state: State, seat: int, rng: Rng) -> State:
        return hidden_variant(state, seat, rng)

    # ----- result --------------------------------------------------------------------------
    def _result(self, state: State) -> dict:
        if state["mode"] == "solo":
            return self._solo_result(state)
        breakdowns = score_holders(state["players"], len(state["players"]), award_second=True)
        scores = [b["total"] for b in breakdowns]
        purses = [b["purse_at_end"] for b in breakdowns]
        return {
            "scores": scores,
            "ranks": ranks_from_scores(scores, purses),
            "details": {"players": breakdowns, "ending": state["ending"],
                        "tie_break": "most coins in purse, then shared"},
        }

    def _solo_result(self, state: State) -> dict:
        holders = [state["players"][0], state["rival"]]
        breakdown = score_holders(holders, 1, award_second=False)[0]
        score = breakdown["total"]
        rival = rival_summary(state["rival"])
        return {
            "scores": [score],
            "ranks": [1],
            "details": {
                "players": [breakdown],
                "score": score,
                "band": band(score),
                "rival": rival,
                "won_profession": {prof: entry["place"] == 1
                                   for prof, entry in breakdown["professions"].items()},
                "ending": state["ending"],
            },
        }

    def _description(self) -> dict:
        return description(card_table(), type_table(), COLOURS)
