"""Setup, the three actions, the Dock and door placement (rulebook "Setup", "Gameplay",
"Door Placement")."""

import pytest

import engines
from engines.aldabas.block import space
from tests.engines.aldabas.aldabas_helpers import GAME, act, card, new, place_on, started


def test_setup_vault_choice_is_secret_and_discards_pay_one_coin_each():
    """Setup 4: "Choose one Door from your hand to place secretly under your Vault board. ...
    For each card you discard during Setup, take one Coin from the supply into your purse." """
    state = new(2, seed=5)
    hand = list(state["players"][0]["hand"])
    assert [a["card"] for a in GAME.legal_actions(state)] == hand
    state = act(state, "setup_vault", card=hand[0])
    assert state["players"][0]["vault_cards"] == [hand[0]]
    assert hand[0] not in GAME.observation(state, 1)["discard"]
    assert str(hand[0]) not in str(GAME.observation(state, 1)["log"])
    state = act(state, "setup_discard", card=hand[1])
    state = act(state, "setup_discard", card=hand[2])
    assert state["players"][0]["purse"] == 2
    assert state["supply"] == 24 - 2
    assert state["discard"] == [hand[1], hand[2]]
    state = act(state, "setup_done")
    assert state["active"] == 1 and state["phase"] == "setup_vault"


def test_dock_is_dealt_after_setup_with_five_slots_costing_0_0_1_2_3():
    """Setup 5: "Deal five doors from the deck face up into the five Dock slots." """
    state = new(3)
    assert state["dock"] == [None] * 5
    state = started(3)
    assert all(door is not None for door in state["dock"])
    assert state["costs"] == [0, 0, 1, 2, 3]
    assert state["supply"] == 36
    assert len({*state["deck"], *state["dock"], *state["discard"]}) + 15 == 81


def test_the_first_placement_goes_only_above_or_right_of_the_vault():
    """"Your Vault counts as a filled space. Therefore, your first placement must be in a
    space immediately above or to the right of your Vault." """
    state = started(2)
    spaces = {tuple(a["space"]) for a in GAME.legal_actions(state) if a["type"] == "place"}
    assert spaces == {(0, 1), (1, 0)}
    door = state["players"][0]["hand"][0]
    with pytest.raises(engines.IllegalAction, match="left and directly below"):
        act(state, "place", card=door, space=[2, 0])
    with pytest.raises(engines.InvalidAction, match=r'"space\[0\]" must be an integer from 0 to 3'):
        act(state, "place", card=door, space=[4, 0])


def placement_example_state():
    """A block with spots A = [0, 2], B = [1, 1], C = [3, 0] open, as in the rulebook."""
    state = started(2)
    place_on(state, 0, {(1, 0): card("F3", "yellow"), (2, 0): card("F3", "blue"),
                        (0, 1): card("F3", "red")})
    return state


@pytest.mark.parametrize(("spot", "refused"), [
    ([0, 2], {"red"}), ([1, 1], {"red", "yellow"}), ([3, 0], {"blue"}),
])
def test_placement_example_spots_and_the_colours_each_refuses(spot, refused):
    """"only the marked spots (A, B and C) are possible ... A Red door could not go in spot
    A. A Red or Yellow Door could not go in spot B. A Blue door could not go in spot C." and
    "It can not be beside, above, or below a Door of the same color (diagonal is fine).
    Your Vault does not count as any color." """
    state = placement_example_state()
    doors = {colour: card("S2", colour) for colour in ("red", "blue", "yellow")}
    state["players"][0]["hand"] = list(doors.values())
    legal = {(a["card"], tuple(a["space"])) for a in GAME.legal_actions(state)
             if a["type"] == "place"}
    assert {s for _, s in legal} == {(0, 2), (1, 1), (3, 0)}
    for colour, door in doors.items():
        allowed = (door, tuple(spot)) in legal
        assert allowed == (colour not in refused), (colour, spot)
        if not allowed:
            with pytest.raises(engines.IllegalAction, match="same colour"):
                act(state, "place", card=door, space=spot)


def test_take_two_coins_and_the_same_action_twice():
    """"you must take two actions. The two actions can be the same or different." and
    "Take two Coins from the supply and add them to your purse." """
    state = started(2)
    purse = state["players"][0]["purse"]
    state = act(state, "take_coins")
    assert state["active"] == 0 and state["actions_left"] == 1
    state = act(state, "take_coins")
    assert state["players"][0]["purse"] == purse + 4
    assert state["active"] == 1 and state["actions_left"] == 2


def test_buying_slides_the_dock_left_and_deals_into_the_rightmost_slot():
    """"After you claim a Door, slide all remaining Doors in the Dock left to fill any
    gaps, then deal a new Door from the deck face up into the rightmost slot." """
    state = started(2)
    dock = list(state["dock"])
    top = state["deck"][-1]
    state = act(state, "buy", slot=1, from_vault=0)
    assert state["players"][0]["hand"][-1] == dock[1]
    assert state["dock"] == [dock[0], dock[2], dock[3], dock[4], top]


def test_paying_from_purse_and_vault_in_any_mix():
    """"Coins are paid into the general supply, and they can come from your purse and/or
    Vault in any combination you wish." """
    state = started(2)
    holder = state["players"][0]
    holder["purse"], holder["vault_coins"] = 2, 2
    splits = [a["from_vault"] for a in GAME.legal_actions(state)
              if a["type"] == "buy" and a["slot"] == 4]
    assert splits == [1, 2]
    supply = state["supply"]
    after = act(state, "buy", slot=4, from_vault=2)
    assert (after["players"][0]["purse"], after["players"][0]["vault_coins"]) == (1, 0)
    assert after["supply"] == supply + 3
    with pytest.raises(engines.IllegalAction, match="impossible"):
        act(state, "buy", slot=4, from_vault=0)
    holder["purse"], holder["vault_coins"] = 1, 0
    with pytest.raises(engines.IllegalAction, match="costs 3"):
        act(state, "buy", slot=4, from_vault=0)


def test_coins_move_freely_from_vault_to_purse_on_your_turn():
    """"On your own turn you may freely move Coins out of your Vault to your purse" """
    state = started(2)
    state["players"][0]["vault_coins"] = 3
    state = act(state, "withdraw", coins=2)
    assert (state["players"][0]["vault_coins"], state["players"][0]["purse"]) == (1, 2)
    assert state["actions_left"] == 2, "moving coins out of the vault is not an action"
    with pytest.raises(engines.IllegalAction):
        act(state, "withdraw", coins=2)


def _in_each_turn_phase() -> dict[str, dict]:
    """Seat 0 in every phase of its own turn: the actions, a Power to choose, each decision
    inside a Power, and the hand limit."""
    def power_of(door_type: str, num_players: int = 2) -> dict:
        state = started(num_players)
        door = card(door_type, "red")
        state["players"][0]["hand"] = [door, card("F3", "blue")]
        state["players"][0]["purse"] = 3
        return act(act(state, "place", card=door, space=[1, 0]), "power", space=[1, 0])

    over_limit = started(2)
    over_limit["players"][0]["hand"] = list(range(60, 69))
    over_limit = act(act(over_limit, "take_coins"), "take_coins")
    powers = started(2)
    powers["players"][0]["hand"] = [card("F3", "red")]
    return {
        "actions": started(2),
        "powers": act(powers, "place", card=card("F3", "red"), space=[1, 0]),
        "soldier": power_of("S1"),
        "keep": power_of("F1"),
        "steal": power_of("F2", num_players=3),
        "clergy": power_of("C1"),
        "builder": power_of("B2B"),
        "hand_limit": over_limit,
    }


@pytest.mark.parametrize("phase", ["actions", "powers", "soldier", "keep", "steal", "clergy",
                                   "builder", "hand_limit"])
def test_withdrawing_is_free_at_any_point_of_your_own_turn(phase):
    """shared/rules/aldabas.md, Turn details: "Moving coins from your vault to your purse is
    free at any point of your own turn (a free action that does not count as one of the
    two)" - in every phase of the mover's turn, listed after that phase's own decisions."""
    state = _in_each_turn_phase()[phase]
    assert state["phase"] == phase and state["active"] == 0
    assert not [a for a in GAME.legal_actions(state) if a["type"] == "withdraw"]
    with pytest.raises(engines.IllegalAction, match="1 to 0 coins"):
        act(state, "withdraw", coins=1)
    state["players"][0]["vault_coins"] = 2
    legal = GAME.legal_actions(state)
    assert legal[-2:] == [{"type": "withdraw", "coins": 1}, {"type": "withdraw", "coins": 2}]
    assert [a for a in legal[:-2] if a["type"] == "withdraw"] == []
    purse = state["players"][0]["purse"]
    after = act(state, "withdraw", coins=2)
    assert (after["players"][0]["vault_coins"], after["players"][0]["purse"]) == (0, purse + 2)
    assert (after["phase"], after["active"], after["actions_left"]) == \
        (phase, 0, state["actions_left"]), "a withdrawal changes nothing else"
    assert GAME.legal_actions(after)[0] == legal[0], "the same decision goes on"
    assert "withdraw" not in {a["type"] for a in GAME.legal_actions(after)}


def test_there_is_no_withdrawing_during_setup():
    """shared/rules/aldabas.md: withdrawing is free "at any point of your own turn"; the setup
    decisions come before the first turn."""
    state = new(2)
    state["players"][0]["vault_coins"] = 1
    assert [a["type"] for a in GAME.legal_actions(state)] == ["setup_vault"] * 5
    with pytest.raises(engines.IllegalAction, match="setup_vault"):
        act(state, "withdraw", coins=1)


def test_the_hand_limit_of_seven_at_the_end_of_the_turn():
    """"If you have more than seven Doors in your hand, discard Doors of your choice until
    you have only seven." """
    state = started(2)
    state["players"][0]["hand"] = list(range(60, 69))
    state = act(state, "take_coins")
    assert state["phase"] == "actions", "the limit is only checked at the end of the turn"
    state = act(state, "take_coins")
    assert state["phase"] == "hand_limit" and state["active"] == 0
    assert [a["card"] for a in GAME.legal_actions(state)] == list(range(60, 69))
    state = act(state, "discard", card=62)
    assert state["active"] == 0
    state = act(state, "discard", card=65)
    assert state["active"] == 1 and len(state["players"][0]["hand"]) == 7
    assert state["discard"][-2:] == [62, 65]


def test_a_placed_door_is_public_and_its_space_named_col_row():
    """"Select a Door from your hand and place it in an empty space in your block" """
    state = started(2)
    door = state["players"][0]["hand"][0]
    state = act(state, "place", card=door, space=[1, 0])
    seen = GAME.observation(state, 1)["players"][0]["block"]
    assert seen == [{"space": [1, 0], "card": door, "coins": 0}]
    assert space(1) == [1, 0]


def test_coins_on_doors_can_not_be_spent_and_a_no_coin_slot_is_free():
    """Soldier 1: "Coins on Doors are no longer considered Coins, and may not be spent for
    other uses." and "A Door in a slot displaying no Coins is free." """
    state = started(2)
    place_on(state, 0, {(1, 0): card("F3", "red")})
    holder = state["players"][0]
    holder["coins"][1], holder["purse"], holder["vault_coins"] = 5, 0, 0
    slots = {a["slot"] for a in GAME.legal_actions(state) if a["type"] == "buy"}
    assert slots == {0, 1}
    with pytest.raises(engines.IllegalAction, match="costs 1"):
        act(state, "buy", slot=2, from_vault=0)
    after = act(state, "buy", slot=0, from_vault=0)
    assert after["players"][0]["coins"][1] == 5 and after["players"][0]["purse"] == 0
