"""Door Powers and Ongoing Abilities (rulebook "Place One Door" and "The Doors")."""

import pytest

import engines
from tests.engines.aldabas.aldabas_helpers import GAME, act, at, card, place_on, started, types_of


def placed(door: int, spot: list[int], cells: dict | None = None, num_players: int = 2):
    """Seat 0 places `door` at `spot` over a block prepared with `cells`."""
    state = started(num_players)
    place_on(state, 0, cells or {})
    state["players"][0]["hand"] = [door]
    return act(state, "place", card=door, space=spot)


def test_a_placement_offers_its_own_power_and_those_left_and_below_in_any_order():
    """"Activate the Power (if any) on the new Door, and the Powers of any Doors (if any)
    immediately below or beside the new Door. You may activate these Powers in any order you
    wish, and you may skip any Powers you don't wish to activate." """
    cells = {(1, 0): card("F3", "blue"), (0, 1): card("F3", "red")}
    state = placed(card("F3", "yellow"), [1, 1], cells)
    assert [a.get("space") for a in GAME.legal_actions(state)] == [[1, 1], [0, 1], [1, 0], None]
    purse = state["players"][0]["purse"]
    state = act(state, "power", space=[1, 0])
    state = act(state, "power", space=[1, 1])
    assert state["players"][0]["purse"] == purse + 6
    with pytest.raises(engines.IllegalAction, match="not available"):
        act(state, "power", space=[1, 1])
    state = act(state, "end_powers")
    assert state["players"][0]["purse"] == purse + 6
    assert state["actions_left"] == 1 and state["phase"] == "actions"


def test_ongoing_abilities_are_not_activatable_powers():
    """"Ongoing abilities are not activatable Powers; they are in effect from the moment a
    Door is placed" """
    state = placed(card("N3", "red"), [1, 0])
    assert state["phase"] == "actions" and state["actions_left"] == 1


def test_soldier_1_moves_a_coin_onto_a_door_as_influence():
    """Soldier 1: "Move one Coin from your purse or Vault onto a Door in your block, where it
    acts as +1 Influence." """
    state = placed(card("S1", "red"), [1, 0], {(0, 1): card("F3", "blue")})
    state["players"][0]["purse"], state["players"][0]["vault_coins"] = 1, 1
    state = act(state, "power", space=[1, 0])
    *coin_moves, withdraw = GAME.legal_actions(state)
    assert {(a["source"], tuple(a["space"])) for a in coin_moves} == {
        ("purse", (1, 0)), ("purse", (0, 1)), ("vault", (1, 0)), ("vault", (0, 1))}
    assert withdraw == {"type": "withdraw", "coins": 1}, "withdraw is free all turn long"
    state = act(state, "soldier_coin", source="vault", space=[0, 1])
    holder = state["players"][0]
    assert holder["coins"][at(0, 1)] == 1 and holder["vault_coins"] == 0 and holder["purse"] == 1
    assert state["phase"] == "actions"


def test_soldier_2_moves_a_coin_from_purse_into_vault():
    """Soldier 2: "Move one Coin from your purse into your Vault." """
    state = started(2)
    state["players"][0]["purse"] = 2
    state["players"][0]["hand"] = [card("S2", "red")]
    state = act(state, "place", card=card("S2", "red"), space=[1, 0])
    state = act(state, "power", space=[1, 0])
    assert (state["players"][0]["purse"], state["players"][0]["vault_coins"]) == (1, 1)


def test_stacked_nobles_make_soldiers_move_more_coins():
    """Noble 2: "When you use a Soldier's Power to move a Coin, move 1 additional Coin.
    Multiple abilities add up. For example if you have two of these, your Soldiers can move
    three Coins." """
    nobles = {(1, 0): card("N2", "blue"), (0, 1): card("N2", "red")}
    state = placed(card("S2", "yellow"), [1, 1], nobles)
    state["players"][0]["purse"] = 5
    state = act(state, "power", space=[1, 1])
    assert (state["players"][0]["purse"], state["players"][0]["vault_coins"]) == (2, 3)
    state = placed(card("S1", "yellow"), [1, 1], nobles)
    state["players"][0]["purse"] = 5
    state = act(state, "power", space=[1, 1])
    for _ in range(3):
        assert state["phase"] == "soldier"
        state = act(state, "soldier_coin", source="purse", space=[1, 1])
    assert state["players"][0]["coins"][at(1, 1)] == 3 and state["phase"] == "actions"


def test_fisher_1_draws_two_keeps_one_and_discards_the_other():
    """Fisher 1: "Draw two Doors from the deck. Discard one and add the other to your
    hand." """
    state = placed(card("F1", "red"), [1, 0])
    first, second = state["deck"][-1], state["deck"][-2]
    state = act(state, "power", space=[1, 0])
    assert GAME.legal_actions(state) == [{"type": "keep", "card": first},
                                         {"type": "keep", "card": second}]
    assert GAME.observation(state, 1)["power"] == {"kind": "F1", "drawn_count": 2}
    state = act(state, "keep", card=second)
    assert second in state["players"][0]["hand"] and state["discard"][-1] == first


def test_fisher_2_steals_two_from_one_rival_or_one_each_from_two():
    """Fisher 2: "Steal two Coins from one rival's purse, or one Coin each from two rivals'
    purses." """
    state = placed(card("F2", "red"), [1, 0], num_players=3)
    for seat, purse in enumerate((0, 3, 3)):
        state["players"][seat]["purse"] = purse
    state = act(state, "power", space=[1, 0])
    assert [a["from"] for a in GAME.legal_actions(state)] == [[1, 1], [1, 2], [2, 2]]
    both = act(state, "steal", **{"from": [1, 2]})
    assert [p["purse"] for p in both["players"]] == [2, 2, 2]
    one = act(state, "steal", **{"from": [2, 2]})
    assert [p["purse"] for p in one["players"]] == [2, 3, 1]
    with pytest.raises(engines.IllegalAction, match="rivals"):
        act(state, "steal", **{"from": [0, 1]})


def test_fisher_3_gains_three_coins_from_the_supply():
    """Fisher 3: "Gain three Coins from the supply to your purse." """
    state = placed(card("F3", "red"), [1, 0])
    supply, purse = state["supply"], state["players"][0]["purse"]
    state = act(state, "power", space=[1, 0])
    assert state["supply"] == supply - 3 and state["players"][0]["purse"] == purse + 3


def test_clergy_moves_a_door_from_hand_to_vault():
    """Clergy: "Move a Door card of your choice from your hand to your Vault." """
    state = placed(card("C1", "red"), [1, 0])
    state["players"][0]["hand"] = [5, 6]
    state = act(state, "power", space=[1, 0])
    assert [a["card"] for a in GAME.legal_actions(state)] == [5, 6]
    state = act(state, "to_vault", card=6)
    assert state["players"][0]["hand"] == [5] and state["players"][0]["vault_cards"][-1] == 6
    assert "6" not in str(GAME.observation(state, 1)["log"][-1])


def test_builder_buys_a_door_from_the_dock():
    """Builder (other Aldaba): "Buy one Door card from the Dock." """
    state = placed(card("B2B", "red"), [1, 0])
    dock = list(state["dock"])
    state = act(state, "power", space=[1, 0])
    assert types_of(state) == {"builder_buy"}
    state = act(state, "builder_buy", slot=0, from_vault=0)
    assert state["players"][0]["hand"] == [dock[0]] and state["phase"] == "actions"


def test_stacked_builders_discount_buying_but_never_below_zero():
    """Builder (key): "When you Buy a Door card from the Dock, it is one Coin cheaper.
    Multiple abilities add up. For example if you have two of these, a Door in the 2-Coin
    slot is free." and "No Door's cost may be reduced below zero." """
    state = started(2)
    place_on(state, 0, {(1, 0): card("B2D", "red"), (0, 1): card("B2D", "blue")})
    state["players"][0]["purse"] = 0
    slots = [a["slot"] for a in GAME.legal_actions(state) if a["type"] == "buy"]
    assert slots == [0, 1, 2, 3]
    supply = state["supply"]
    state = act(state, "buy", slot=3, from_vault=0)
    assert state["players"][0]["purse"] == 0 and state["supply"] == supply
    state["players"][0]["purse"] = 1
    state = act(state, "buy", slot=4, from_vault=0)
    assert state["players"][0]["purse"] == 0


def test_fisher_1_with_fewer_than_two_doors_left_keeps_what_it_draws():
    """Canonical decision: "A power that cannot do anything (no coin to move, empty deck) may
    still be chosen and does nothing." Rulebook Fisher 1: "Draw two Doors from the deck.
    Discard one and add the other to your hand." (one door left: it is kept) """
    state = placed(card("F1", "red"), [1, 0])
    state["deck"] = state["deck"][-1:]
    last = state["deck"][0]
    one = act(state, "power", space=[1, 0])
    assert one["players"][0]["hand"] == [last] and one["phase"] == "actions"
    state["deck"] = []
    none = act(state, "power", space=[1, 0])
    assert none["players"][0]["hand"] == [] and none["phase"] == "actions"
    assert none["end_trigger"] is None, "drawing the deck empty is no end trigger; refilling is"


def test_soldier_1_with_no_coin_does_nothing_and_soldier_2_only_takes_from_the_purse():
    """Soldier 1: "Move one Coin from your purse or Vault onto a Door in your block";
    Soldier 2: "Move one Coin from your purse into your Vault." """
    state = placed(card("S1", "red"), [1, 0])
    state["players"][0]["purse"] = state["players"][0]["vault_coins"] = 0
    state = act(state, "power", space=[1, 0])
    assert state["phase"] == "actions" and state["players"][0]["coins"] == [0] * 12
    state = placed(card("S2", "red"), [1, 0])
    state["players"][0]["purse"], state["players"][0]["vault_coins"] = 0, 2
    state = act(state, "power", space=[1, 0])
    assert (state["players"][0]["purse"], state["players"][0]["vault_coins"]) == (0, 2)
