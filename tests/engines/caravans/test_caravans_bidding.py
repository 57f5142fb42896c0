"""Caravans setup and bidding; each test quotes the rulebook (seeds/003) or rules/caravans.md."""

import pytest

import engines
from engines.caravans.components import CARDS, MAP_ROUTES
from tests.engines.caravans.caravans_helpers import GAME, act, skip_setup

DONNA, PHIL, JASON, CHRISTINA = range(4)


# ----- setup -------------------------------------------------------------------------------
def test_each_player_draws_three_secret_cards_of_their_colour():
    """Rulebook: "draw three cards from the top of the corresponding colored pile of commodity
    cards (these cards are kept secret)"."""
    state = GAME.new_game(num_players=3, seed=4, options={})
    for seat, colour in enumerate(["red", "blue", "green"]):
        assert len(state["hands"][seat]) == 3
        assert {CARDS[c]["colour"] for c in state["hands"][seat]} == {colour}
    seen = GAME.observation(state, 0)
    assert seen["hand"] == sorted(state["hands"][0])
    assert seen["hand_counts"] == [3, 3, 3]
    assert seen["known_cards"] == [[], [], []]
    assert "hands" not in seen and "deck" not in seen
    assert seen["deck_count"] == len(state["deck"]) == 30 - 9
    setup_event = seen["log"][0]
    assert setup_event["hand"] == seen["hand"] and "_private" not in setup_event


def test_setup_passage_gold_shah_and_an_unshuffled_deck_in_seat_order():
    """Rulebook: "each player [takes] the right of passage corresponding to the person to their
    left ... each player takes five gold chips"; "The commodity cards are stacked into one deck,
    but not shuffled"; rules: "seat i holds colour i+1 mod n ... Seat 0 ... holds the Favor of the
    Shah"."""
    state = GAME.new_game(num_players=4, seed=2, options={})
    assert state["rop"] == {"blue": 0, "green": 1, "yellow": 2, "red": 3}
    assert state["gold"] == [5, 5, 5, 5]
    assert state["shah"] == 0 and state["eyes"] is None and state["pirate_queen"] is None
    colours = [CARDS[c]["colour"] for c in state["deck"]]
    assert colours == ["red"] * 7 + ["blue"] * 7 + ["green"] * 7 + ["yellow"] * 7


def test_two_free_routes_on_your_own_map_with_a_control_claim():
    """Rulebook: "all players may build two routes on their map for free ... if this gives them
    a majority of routes into a city, they may also claim control of that city"."""
    state = GAME.new_game(num_players=3, seed=1, options={})
    assert GAME.current_seat(state) == 0
    assert {a["route"] for a in GAME.legal_actions(state)} == set(MAP_ROUTES["red"])
    with pytest.raises(engines.IllegalAction, match="own map"):
        act(state, "free_route", route="blue:ivory-metal")
    state = act(state, "free_route", route="red:ivory-metal")
    state = act(state, "free_route", route="red:ivory-gems")
    assert state["control"] == {"red.ivory": 0}
    assert state["gold"][0] == 5 + 3
    assert GAME.current_seat(state) == 1
    state = act(state, "free_route", route="blue:ivory-metal")
    state = act(state, "free_route", route="blue:gems-spices")
    assert state["gold"][1] == 5 and "blue.ivory" not in state["control"]
    state = act(state, "free_route", route="green:ivory-gems")
    state = act(state, "free_route", route="green:ivory-spices")
    assert state["control"]["green.ivory"] == 2 and state["gold"][2] == 5 + 2
    assert state["phase"] == "bidding" and state["turn"] == 1


def test_a_free_route_cannot_be_built_twice():
    """Rulebook: "all players may build two routes on their map"; rules: "A route has at most
    one owner.\""""
    state = GAME.new_game(num_players=2, seed=1, options={})
    state = act(state, "free_route", route="red:ivory-metal")
    assert {"type": "free_route", "route": "red:ivory-metal"} not in GAME.legal_actions(state)
    with pytest.raises(engines.IllegalAction, match="already built"):
        act(state, "free_route", route="red:ivory-metal")


def test_each_turn_the_shah_holder_reveals_the_cards_and_opens_the_bidding():
    """Rulebook: "The player with the Favor of the Shah takes commodity cards equal to the number
    of players from the top of the deck"; "The player with the favor of the Shah begins by
    bidding"; "The bidding continues in this fashion with each player (moving clockwise)
    getting a chance to initiate a bid.\""""
    state = skip_setup(GAME.new_game(num_players=3, seed=0, options={}))
    state = act(state, "open_auction", item="shah", amount=0)
    state = act(state, "pass")
    state = act(state, "pass")
    state = act(state, "name_shah", seat=2)
    state = act(state, "decline_auction")  # seat 1
    state = act(state, "decline_auction")  # seat 2
    assert state["phase"] == "actions"
    state["actions"]["acted"] = True
    deck = list(state["deck"])
    for _ in range(3):
        state = act(state, "end_actions")
    assert state["turn"] == 2 and state["face_up"] == deck[:3]
    assert state["log"][-1]["event"] == "turn" and state["log"][-1]["shah"] == 2
    openers = []
    while state["phase"] == "bidding":
        openers.append(GAME.current_seat(state))
        state = act(state, "decline_auction")
    assert openers == [2, 0, 1]


# ----- the bidding example ------------------------------------------------------------------
def _example_start() -> dict:
    """Four players after setup, at the first bidding phase, with a gems card face up."""
    for seed in range(100):
        state = skip_setup(GAME.new_game(num_players=4, seed=seed, options={}))
        if any(CARDS[c]["type"] == "gems" for c in state["face_up"]):
            return state
    raise AssertionError("no seed reveals a gems card")


def test_the_bidding_example_move_by_move():
    """Rulebook, "A Bidding Example": Donna bids two for the Eyes of Shamesh, Phil and Jason
    pass, Christina ups to three, Donna raises to four, Christina does not bid higher, "so Donna
    gets the piece ... she pays the bank and turns her camel face down". Phil bids zero on the
    Shah, Jason and Christina pass, "Donna may not bid one or more since her camel is turned face
    down"; Phil takes the Shah and "does not need to turn his camel face down". Jason bids zero
    on a gem card, Christina bids one, Phil passes, Jason passes; "Christina pays her gold to the
    bank, turns her camel face down and takes the card". Christina bids zero ("the only amount
    she can bid") on the Pirate Queen, Phil bids one, Jason passes; "Since Christina can not
    outbid Phil, he takes the piece." "Phil ended the phase with two items, and Jason got
    nothing.\""""
    state = _example_start()
    gold = list(state["gold"])
    gem = next(c for c in state["face_up"] if CARDS[c]["type"] == "gems")

    assert GAME.current_seat(state) == DONNA
    state = act(state, "open_auction", item="eyes", amount=2)
    assert GAME.current_seat(state) == PHIL
    state = act(state, "pass")
    state = act(state, "pass")  # Jason
    assert GAME.current_seat(state) == CHRISTINA
    state = act(state, "bid", amount=3)
    assert GAME.current_seat(state) == DONNA
    state = act(state, "bid", amount=4)
    assert GAME.current_seat(state) == CHRISTINA, "Phil and Jason already passed"
    state = act(state, "pass")
    assert state["eyes"] == DONNA and state["gold"][DONNA] == gold[DONNA] - 4
    assert state["camel_up"] == [False, True, True, True]

    assert GAME.current_seat(state) == PHIL
    state = act(state, "open_auction", item="shah", amount=0)
    state = act(state, "pass")  # Jason
    assert GAME.current_seat(state) == CHRISTINA
    state = act(state, "pass")
    assert state["log"][-2] == {"event": "pass", "seat": DONNA, "automatic": True}
    assert GAME.current_seat(state) == PHIL
    assert {a["seat"] for a in GAME.legal_actions(state)} == {0, 1, 2, 3}
    state = act(state, "name_shah", seat=PHIL)
    assert state["shah"] == PHIL and state["camel_up"][PHIL]
    assert state["gold"][PHIL] == gold[PHIL]

    assert GAME.current_seat(state) == JASON
    state = act(state, "open_auction", item=f"card:{gem}", amount=0)
    assert GAME.current_seat(state) == CHRISTINA
    state = act(state, "bid", amount=1)
    assert GAME.current_seat(state) == PHIL, "Donna's camel is face down: she cannot raise"
    assert {"type": "bid", "amount": 1} not in GAME.legal_actions(state)
    assert {"type": "bid", "amount": 2} in GAME.legal_actions(state), "Phil could have bid"
    state = act(state, "pass")
    assert GAME.current_seat(state) == JASON
    state = act(state, "pass")
    assert gem in state["hands"][CHRISTINA] and gem in state["known"][CHRISTINA]
    assert state["gold"][CHRISTINA] == gold[CHRISTINA] - 1
    assert not state["camel_up"][CHRISTINA]

    assert GAME.current_seat(state) == CHRISTINA
    queen_bids = [a for a in GAME.legal_actions(state) if a.get("item") == "pirate_queen"]
    assert queen_bids == [{"type": "open_auction", "item": "pirate_queen", "amount": 0}]
    with pytest.raises(engines.IllegalAction, match="face down"):
        act(state, "open_auction", item="pirate_queen", amount=1)
    state = act(state, "open_auction", item="pirate_queen", amount=0)
    assert GAME.current_seat(state) == PHIL
    state = act(state, "bid", amount=1)
    assert GAME.current_seat(state) == JASON
    state = act(state, "pass")
    assert state["pirate_queen"] == PHIL and state["gold"][PHIL] == gold[PHIL] - 1

    assert state["phase"] == "actions", "every player had their chance to open an auction"
    assert state["shah"] == PHIL and state["pirate_queen"] == PHIL
    assert GAME.current_seat(state) == PHIL, "the action phase starts with the Shah holder"
    assert state["hands"][JASON] == GAME.new_game(4, state["seed"])["hands"][JASON]
    assert state["gold"][JASON] == gold[JASON]


# ----- bidding guidelines ------------------------------------------------------------------
def test_each_item_is_auctioned_once_per_turn():
    """Rulebook: "Each item (cards counts as separate items) can only be bid on once per
    turn.\""""
    state = skip_setup(GAME.new_game(num_players=3, seed=0, options={}))
    state = act(state, "open_auction", item="eyes", amount=0)
    state = act(state, "pass")
    state = act(state, "pass")
    assert state["eyes"] == 0
    items = {a.get("item") for a in GAME.legal_actions(state)}
    assert "eyes" not in items and "shah" in items
    assert {f"card:{c}" for c in state["face_up"]} <= items
    with pytest.raises(engines.IllegalAction, match="once per turn"):
        act(state, "open_auction", item="eyes", amount=0)


def test_a_pass_is_final_for_that_item():
    """Rulebook: "Once a player has passed, however, they may not bid on the item if it comes
    back around.\""""
    state = skip_setup(GAME.new_game(num_players=3, seed=0, options={}))
    state = act(state, "open_auction", item="shah", amount=0)
    state = act(state, "pass")  # seat 1 out
    state = act(state, "bid", amount=1)  # seat 2
    assert GAME.current_seat(state) == 0
    state = act(state, "bid", amount=2)
    assert GAME.current_seat(state) == 2, "seat 1 passed and is not asked again"


def test_paying_gold_limits_you_to_zero_bids_for_the_rest_of_the_turn():
    """Rulebook: "A player who has bi[d] and payed gold for any item this turn may not bid more
    than zero on an item"; rules: "Every camel turns face up" at the start of a turn."""
    state = skip_setup(GAME.new_game(num_players=2, seed=0, options={}))
    state = act(state, "open_auction", item="eyes", amount=1)
    state = act(state, "pass")
    assert not state["camel_up"][0]
    state = act(state, "open_auction", item="shah", amount=0)  # seat 1
    assert state["log"][-2] == {"event": "pass", "seat": 0, "automatic": True}
    state = act(state, "name_shah", seat=0)
    assert state["phase"] == "actions"
    state["actions"]["acted"] = True
    state = act(state, "end_actions")
    state = act(state, "end_actions")
    assert state["phase"] == "bidding" and state["turn"] == 2
    assert state["camel_up"] == [True, True], "camels turn face up each turn"
    assert {"type": "open_auction", "item": "shah", "amount": 1} in GAME.legal_actions(state)


def test_zero_bids_do_not_turn_the_camel():
    """Rulebook: "If the bid was greater than zero the player must pay the bank"; example:
    "(since he paid no gold) does not need to turn his camel face down"."""
    state = skip_setup(GAME.new_game(num_players=2, seed=0, options={}))
    gold = list(state["gold"])
    state = act(state, "open_auction", item="pirate_queen", amount=0)
    state = act(state, "pass")
    assert state["pirate_queen"] == 0 and state["camel_up"][0] and state["gold"] == gold


def test_nobody_bids_on_their_own_right_of_passage():
    """Rulebook: "A player may never bid on their own right of passage"; "(you may never own
    your own right of passage)"."""
    state = skip_setup(GAME.new_game(num_players=3, seed=0, options={}))
    state["rop"]["red"] = None  # sold to the bank earlier
    assert all(a.get("item") != "rop:red" for a in GAME.legal_actions(state))
    with pytest.raises(engines.IllegalAction, match="own right of passage"):
        act(state, "open_auction", item="rop:red", amount=0)
    state = act(state, "decline_auction")
    assert GAME.current_seat(state) == 1
    state = act(state, "open_auction", item="rop:red", amount=1)
    assert GAME.current_seat(state) == 2
    state = act(state, "pass")
    assert state["rop"]["red"] == 1, "seat 0 (red) was never asked to bid"
    assert state["log"][-1]["event"] == "won"


def test_the_shah_winner_hands_it_to_anyone_and_the_eyes_change_hands():
    """Rulebook: "In the case of the favor of the Shah, you may give this item to anyone else
    whether they want it or not"; rules: the Shah, Eyes and Pirate Queen "change hands even when
    held"."""
    state = skip_setup(GAME.new_game(num_players=3, seed=0, options={}))
    state["eyes"] = 2
    state = act(state, "open_auction", item="shah", amount=0)
    state = act(state, "pass")
    state = act(state, "pass")
    state = act(state, "name_shah", seat=2)
    assert state["shah"] == 2
    state = act(state, "open_auction", item="eyes", amount=1)  # seat 1
    state = act(state, "pass")  # seat 2, the holder
    state = act(state, "pass")  # seat 0
    assert state["eyes"] == 1
    state = act(state, "decline_auction")  # seat 2
    assert state["phase"] == "actions" and GAME.current_seat(state) == 2


def test_unsold_face_up_cards_are_discarded():
    """Rules: "Face-up cards nobody won are discarded"; rulebook: the Shah holder "takes
    commodity cards equal to the number of players from the top of the deck and places them face
    up\"."""
    state = skip_setup(GAME.new_game(num_players=2, seed=3, options={}))
    revealed = list(state["face_up"])
    assert len(revealed) == 2 and len(state["deck"]) == 14 - 2
    state = act(state, "open_auction", item=f"card:{revealed[0]}", amount=0)
    state = act(state, "pass")
    state = act(state, "decline_auction")
    assert state["phase"] == "actions"
    assert revealed[0] in state["hands"][0]
    assert state["discard"] == [revealed[1]] and state["face_up"] == []
