"""Build Caravans positions by hand for the rules tests."""

import engines
from engines.caravans import flow
from engines.caravans.components import CARDS

GAME = engines.get("caravans")


def act(state: dict, kind: str, **fields) -> dict:
    return GAME.apply(state, {"type": kind, **fields})


def skip_setup(state: dict) -> dict:
    """Play the free routes of the setup with the first listed route each time."""
    while state["phase"] == "setup":
        state = GAME.apply(state, GAME.legal_actions(state)[0])
    return state


def action_phase(num_players: int = 4, seat: int = 0, seed: int = 0) -> dict:
    """A first-turn action phase with `seat` to act: no routes built, no face-up cards."""
    state = GAME.new_game(num_players=num_players, seed=seed, options={})
    state.update(setup_queue=[], turn=1, shah=seat)
    state["deck"] = state["deck"][num_players:]
    flow.start_action_phase(state)
    return state


def card(city_type: str, colour: str | None = None, nth: int = 0) -> int:
    """The id of the nth card of that type (and colour, when given)."""
    ids = [c["id"] for c in CARDS
           if c["type"] == city_type and colour in (None, c["colour"])]
    return ids[nth]


def give_cards(state: dict, seat: int, *cards: int) -> None:
    """Move cards into a hand from wherever they are (deck, other hands)."""
    for c in cards:
        for hand in state["hands"]:
            if c in hand:
                hand.remove(c)
        if c in state["deck"]:
            state["deck"].remove(c)
        state["hands"][seat].append(c)


def own(state: dict, seat: int, *routes: str) -> None:
    for route in routes:
        state["owner"][route] = seat
