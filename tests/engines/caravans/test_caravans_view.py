"""Caravans components, observations and hidden information (rules/caravans.md, issue 4)."""

from engines.caravans.components import CARDS
from engines.rng import Rng
from tests.engines.caravans.caravans_helpers import GAME, act, skip_setup


def test_maps_and_cards_are_published_as_data():
    """Rules: "Every map has one city of each type"; "Commodity cards, 10 per colour"; "The
    degree of a city is the number of routes of its map that touch it"; buy cost "degree(a) +
    degree(b) − 1"."""
    components = GAME.describe()["components"]
    assert components["colours"] == ["red", "blue", "green", "yellow"]
    assert len(components["cards"]) == 40
    for colour, board in components["maps"].items():
        assert len(board["cities"]) == 6
        assert sum(c["degree"] for c in board["cities"].values()) == 2 * len(board["routes"])
        assert sum(1 for card in components["cards"] if card["colour"] == colour) == 10
    route = components["maps"]["yellow"]["routes"]["yellow:ivory-gems"]
    assert route == {"map": "yellow", "cities": ["yellow.ivory", "yellow.gems"],
                     "types": ["ivory", "gems"], "kind": "land", "buy_cost": 7,
                     "destroy_cost": 14}


def test_observations_show_public_things_and_only_counts_of_other_hands():
    """Issue 4: "own cards secret; others' card counts; gold, routes, control, camels, items and
    the bank are public; the deck only as a count"."""
    state = skip_setup(GAME.new_game(num_players=3, seed=5, options={}))
    seen = GAME.observation(state, 1)
    assert seen["hand"] == sorted(state["hands"][1])
    assert seen["hand_counts"] == [3, 3, 3] and seen["deck_count"] == 21 - 3
    assert seen["gold"] == state["gold"] and seen["owner"] == state["owner"]
    assert seen["control"] == state["control"] and seen["camel_up"] == [True] * 3
    assert seen["rop"] == {"blue": 0, "green": 1, "red": 2} and seen["shah"] == 0
    assert seen["bank"] == {"passages": [], "eyes": True, "pirate_queen": True}
    assert seen["face_up"] == state["face_up"]
    assert "hands" not in seen and "deck" not in seen and "rng" not in seen


def test_hidden_variants_keep_what_the_seat_knows():
    """Rules: "each player draws 3 from their own pile (secret)"; the rest "stacked into one
    deck in seat order": a re-deal for seat 0 keeps seat 0's hand, every card known to be in a
    hand, and the colour of every unseen card, and changes the unseen cards."""
    state = skip_setup(GAME.new_game(num_players=3, seed=5, options={}))
    card = state["face_up"][0]
    state = act(state, "open_auction", item=f"card:{card}", amount=0)
    state = act(state, "pass")
    state = act(state, "pass")
    assert GAME.current_seat(state) == 1
    state = act(state, "open_auction", item="shah", amount=0)
    state = act(state, "pass")
    state = act(state, "pass")
    state = act(state, "name_shah", seat=1)
    state = act(state, "decline_auction")
    rng, changed = Rng(7), 0
    for _ in range(20):
        variant = GAME.hidden_variant(state, 1, rng)
        assert variant["hands"][1] == state["hands"][1]
        assert card in variant["hands"][0]
        for seat in (0, 2):
            assert len(variant["hands"][seat]) == len(state["hands"][seat])
        colours = [[CARDS[c]["colour"] for c in hand] for hand in variant["hands"]]
        assert colours == [[CARDS[c]["colour"] for c in hand] for hand in state["hands"]]
        assert [CARDS[c]["colour"] for c in variant["deck"]] == \
            [CARDS[c]["colour"] for c in state["deck"]]
        assert GAME.observation(variant, 1) == GAME.observation(state, 1)
        changed += variant["hands"] != state["hands"] or variant["deck"] != state["deck"]
    assert changed


def test_the_action_reference_names_every_move_and_the_bidding_limits():
    """Rulebook: "A player who has bi[d] and payed gold for any item this turn may not bid more
    than zero on an item"; "A player may never bid on their own right of passage"; "Each item
    ... can only be bid on once per turn": describe()'s action reference states these limits
    and names every action type a game can ask for."""
    reference = GAME.describe()["actions"]
    for kind in ("open_auction", "bid"):
        assert "face down" in reference[kind] and "your gold" in reference[kind]
    assert "own right of passage" in reference["open_auction"]
    assert "once per turn" in reference["open_auction"]
    state, seen = GAME.new_game(num_players=3, seed=11, options={}), set()
    while not GAME.is_over(state):
        legal = GAME.legal_actions(state)
        seen.update(a["type"] for a in legal)
        state = GAME.apply(state, legal[len(legal) // 2])
    assert seen <= set(reference)
