"""Caravans action phase; each test quotes the rulebook (seeds/003) or rules/caravans.md."""

import pytest

import engines
from tests.engines.caravans.caravans_helpers import GAME, act, action_phase, card, give_cards, own


# ----- building ----------------------------------------------------------------------------
def test_building_costs_one_gold_and_a_matching_card():
    """Rulebook: "To create a route between two cities, a player must pay one gold to the bank
    and discard a card matching one of the two connected cities.\""""
    state = action_phase(seat=0)
    ivory, silk = card("ivory", "red"), card("silk", "red")
    give_cards(state, 0, ivory, silk)
    gold = state["gold"][0]
    with pytest.raises(engines.IllegalAction, match="matches neither"):
        act(state, "build", route="red:ivory-metal", card=silk)
    state = act(state, "build", route="red:ivory-metal", card=ivory)
    assert state["owner"]["red:ivory-metal"] == 0
    assert state["gold"][0] == gold - 1
    assert ivory not in state["hands"][0] and state["discard"][-1] == ivory
    state["gold"][0] = 0
    assert not [a for a in GAME.legal_actions(state) if a["type"] == "build"]
    with pytest.raises(engines.IllegalAction, match="costs 1 gold"):
        act(state, "build", route="red:gems-silk", card=silk)


def test_the_eyes_of_shamesh_make_land_routes_free():
    """Rulebook: "If the player holds the Eyes of Shamesh, land routes cost no gold.\""""
    state = action_phase(seat=0)
    state["eyes"] = 0
    give_cards(state, 0, card("ivory", "red"), card("silk", "red"))
    gold = state["gold"][0]
    state = act(state, "build", route="red:ivory-metal", card=card("ivory", "red"))  # land
    assert state["gold"][0] == gold
    state = act(state, "build", route="red:spices-silk", card=card("silk", "red"))  # sea
    assert state["gold"][0] == gold - 1


def test_the_pirate_queen_makes_sea_routes_free():
    """Rulebook: "If the player owns the Pirate Queen, sea routes cost no gold.\""""
    state = action_phase(seat=0)
    state["pirate_queen"] = 0
    give_cards(state, 0, card("ivory", "red"), card("silk", "red"))
    gold = state["gold"][0]
    state = act(state, "build", route="red:ivory-incense", card=card("ivory", "red"))  # sea
    assert state["gold"][0] == gold
    state = act(state, "build", route="red:gems-silk", card=card("silk", "red"))  # land
    assert state["gold"][0] == gold - 1


def test_buying_costs_the_routes_out_of_both_cities():
    """Rulebook: "it is possible to buy the route outright. This cost is equal to the total
    number of routes going out of both connected cities"; rules: "degree(a) + degree(b) − 1
    gold (... this one counted once)"."""
    state = action_phase(seat=1)  # blue: ivory and silk have 4 routes each
    state["hands"][1] = []  # buying outright: no card matching either city
    state["gold"][1] = 7
    state = act(state, "buy", route="blue:ivory-silk")
    assert state["owner"]["blue:ivory-silk"] == 1 and state["gold"][1] == 0
    state["gold"][1] = 4
    with pytest.raises(engines.IllegalAction, match="costs 6 gold"):
        act(state, "buy", route="blue:ivory-metal")  # 4 + 3 - 1 = 6


def test_buying_outright_is_for_a_player_without_a_matching_card():
    """Rulebook: "Buy One or More Routes: If a player does not have a card matching one of the
    cities he/she wants to build a route between, it is possible to buy the route outright.\""""
    state = action_phase(seat=0)
    state["hands"][0] = [card("gems", "red")]
    state["gold"][0] = 20
    buys = {a["route"] for a in GAME.legal_actions(state) if a["type"] == "buy"}
    assert "red:ivory-gems" not in buys and "red:metal-gems" not in buys
    assert "red:ivory-metal" in buys
    with pytest.raises(engines.IllegalAction, match="matching card"):
        act(state, "buy", route="red:gems-silk")
    state = act(state, "buy", route="red:ivory-metal")
    assert state["owner"]["red:ivory-metal"] == 0 and state["gold"][0] == 20 - 5
    state["hands"][0] = []
    state = act(state, "buy", route="red:gems-silk")
    assert state["owner"]["red:gems-silk"] == 0


def test_destroying_costs_double_and_never_your_own_route():
    """Rulebook: "A player may destroy someone elses route by paying double that routes cost
    ... Players may NOT destroy their own routes.\""""
    state = action_phase(seat=0)
    own(state, 3, "red:ivory-metal")  # seat 3 holds the red right of passage
    own(state, 0, "red:gems-silk")
    state["gold"][0] = 10
    state = act(state, "destroy", route="red:ivory-metal")  # buy cost 3 + 3 - 1 = 5
    assert state["owner"]["red:ivory-metal"] is None and state["gold"][0] == 0
    state["gold"][0] = 10
    with pytest.raises(engines.IllegalAction, match="own routes"):
        act(state, "destroy", route="red:gems-silk")
    assert {"type": "destroy", "route": "red:gems-silk"} not in GAME.legal_actions(state)


def test_you_work_on_your_map_or_one_whose_right_of_passage_you_hold():
    """Rulebook: "The first three actions may be taken on the players map or on another map if
    that player holds the corresponding right of passage.\""""
    state = action_phase(seat=0)  # seat 0 is red and holds blue's right of passage
    state["hands"][0] = []  # buying outright: no card matching either city
    state["gold"][0] = 20
    maps = {a["route"].split(":")[0] for a in GAME.legal_actions(state) if a["type"] == "buy"}
    assert maps == {"red", "blue"}
    with pytest.raises(engines.IllegalAction, match="right of passage"):
        act(state, "buy", route="green:ivory-gems")
    state = act(state, "buy", route="blue:ivory-metal")
    assert state["owner"]["blue:ivory-metal"] == 0


# ----- control -----------------------------------------------------------------------------
def test_control_pays_the_degree_and_removes_the_opponents_routes():
    """Rulebook: "Immediately after a player controls the majority of routes into a city ...
    That player gains gold equal to the number of routes going into that city ... All opponent
    roads that go into this city are removed.\""""
    state = action_phase(seat=0)
    own(state, 0, "red:ivory-metal")
    own(state, 3, "red:ivory-incense")
    give_cards(state, 0, card("gems", "red"))
    gold = state["gold"][0]
    state = act(state, "build", route="red:ivory-gems", card=card("gems", "red"))
    assert state["control"] == {"red.ivory": 0}
    assert state["gold"][0] == gold - 1 + 3
    assert state["owner"]["red:ivory-incense"] is None
    claim = next(e for e in state["log"] if e["event"] == "claim")
    assert claim["removed"] == ["red:ivory-incense"] and claim["gold"] == 3


def test_a_city_is_claimed_once_and_later_routes_into_it_stay():
    """Rulebook: "Immediately after a player controls the majority of routes into a city, he/she
    places a control marker onto it. That player gains gold equal to the number of routes going
    into that city"; "In other words, the routes are only destroyed at the moment a city is
    controlled.\""""
    state = action_phase(seat=1)  # blue.ivory has 4 routes
    own(state, 1, "blue:ivory-metal", "blue:ivory-spices")
    state["hands"][1] = []  # buying outright, later: no card matching either city
    give_cards(state, 1, card("silk", "blue"))
    state["gold"][1] = 6
    state = act(state, "build", route="blue:ivory-silk", card=card("silk", "blue"))
    assert state["control"] == {"blue.ivory": 1} and state["gold"][1] == 6 - 1 + 4
    state = act(state, "buy", route="blue:ivory-incense")  # 4 + 3 - 1 = 6
    assert state["gold"][1] == 9 - 6, "a further route into a controlled city pays nothing"
    assert [e["event"] for e in state["log"]].count("claim") == 1

    state = action_phase(seat=0)  # seat 0 holds blue's right of passage
    state["hands"][0] = []  # buying outright: no card matching either city
    own(state, 1, "blue:ivory-metal", "blue:ivory-spices", "blue:ivory-silk")
    state["control"]["blue.ivory"] = 1
    state["gold"][0] = 6
    state = act(state, "buy", route="blue:ivory-incense")
    assert state["owner"]["blue:ivory-incense"] == 0 and state["control"] == {"blue.ivory": 1}


def test_half_of_the_routes_is_not_a_majority():
    """Rules: "a player controls a city when they own more than half of its routes"."""
    state = action_phase(seat=1)  # blue.ivory has 4 routes
    state["hands"][1] = []  # buying outright: no card matching either city
    own(state, 1, "blue:ivory-metal")
    state["gold"][1] = 30
    state = act(state, "buy", route="blue:ivory-spices")
    assert "blue.ivory" not in state["control"]
    state = act(state, "buy", route="blue:ivory-silk")
    assert state["control"]["blue.ivory"] == 1


def test_removed_routes_cascade_into_lost_control_elsewhere():
    """Rulebook: "If this means that that opponent loses control of OTHER cities, then remove
    their control markers immediately (They may repurchase those routes in the future)."""
    state = action_phase(seat=0)
    own(state, 3, "red:ivory-incense", "red:spices-incense")
    state["control"]["red.incense"] = 3
    own(state, 0, "red:ivory-metal")
    state["hands"][0], state["hands"][3] = [], []  # buying outright: no matching card
    state["gold"][0] = 5
    state = act(state, "buy", route="red:ivory-gems")
    assert state["control"] == {"red.ivory": 0}
    assert state["owner"]["red:spices-incense"] == 3, "only routes into the claimed city go"
    lost = [e for e in state["log"] if e["event"] == "control_lost"]
    assert lost == [{"event": "control_lost", "seat": 3, "city": "red.incense"}]
    state["actions"]["index"] = 3  # seat 3 repurchases the route later
    state["gold"][3] = 5
    state = act(state, "buy", route="red:silk-incense")
    assert state["control"]["red.incense"] == 3


def test_destroying_a_route_can_cost_its_owner_control():
    """Rules: "A controller who loses the majority loses control; a new claim later pays
    again.\""""
    state = action_phase(seat=0)
    own(state, 3, "red:ivory-incense", "red:spices-incense")
    state["control"]["red.incense"] = 3
    state["gold"][0] = 10
    state = act(state, "destroy", route="red:spices-incense")
    assert "red.incense" not in state["control"]


# ----- selling a right of passage ------------------------------------------------------------
def test_selling_a_right_of_passage_pays_the_controlled_cities_of_its_map():
    """Rulebook: "Sell a Right of Passage to the Bank: The value of this right of passage is
    equal to the number of developed cities on the corresponding map"; rules: "for the number of
    controlled cities on that map"."""
    state = action_phase(seat=0)  # seat 0 holds blue
    state["control"].update({"blue.ivory": 1, "blue.gems": 2, "red.ivory": 0})
    gold = state["gold"][0]
    assert {"type": "sell_passage", "colour": "blue"} in GAME.legal_actions(state)
    with pytest.raises(engines.IllegalAction, match="do not hold"):
        act(state, "sell_passage", colour="green")
    state = act(state, "sell_passage", colour="blue")
    assert state["gold"][0] == gold + 2 and state["rop"]["blue"] is None
    with pytest.raises(engines.IllegalAction, match="right of passage"):
        act(state, "buy", route="blue:ivory-metal")


def test_a_sold_passage_is_auctioned_but_never_to_its_own_colour():
    """Rulebook: items include "A right of passage that has been sold to the bank (you may never
    own your own right of passage)"."""
    state = action_phase(num_players=2, seat=0)  # seat 0 holds blue, seat 1 is blue
    state = act(state, "sell_passage", colour="blue")
    state = act(state, "end_actions")
    state = act(state, "end_actions")
    assert state["phase"] == "bidding"
    assert {"type": "open_auction", "item": "rop:blue", "amount": 0} in GAME.legal_actions(state)
    state = act(state, "decline_auction")
    assert all(a.get("item") != "rop:blue" for a in GAME.legal_actions(state))


def test_a_route_has_at_most_one_owner():
    """Rules: "A route has at most one owner.\""""
    state = action_phase(seat=0)
    own(state, 3, "red:ivory-metal")
    give_cards(state, 0, card("ivory", "red"))
    state["gold"][0] = 20
    for kind, extra in (("build", {"card": card("ivory", "red")}), ("buy", {})):
        with pytest.raises(engines.IllegalAction, match="already belongs to seat 3"):
            act(state, kind, route="red:ivory-metal", **extra)
    assert all(a.get("route") != "red:ivory-metal" for a in GAME.legal_actions(state)
               if a["type"] in ("build", "buy"))
