"""The three end triggers, the final round and coins from the box (rulebook "Game End")."""

from tests.engines.aldabas.aldabas_helpers import GAME, act, card, place_on, started, trigger


def play_turn(state: dict) -> dict:
    """The active seat takes coins twice."""
    return act(act(state, "take_coins"), "take_coins")


def test_supply_running_out_triggers_the_end_and_coins_then_come_from_the_box():
    """"The general supply runs out of Coins." and "Use extra Coins from the box (if needed)
    if any players gain Coins after the general supply has run out." """
    state = started(3)
    state = play_turn(state)
    state["supply"] = 1
    state = act(state, "take_coins")
    assert state["players"][1]["purse"] == 2
    assert state["supply"] == 0 and state["box_used"] == 1
    assert trigger(state) == (1, "supply_empty")
    state = act(state, "take_coins")
    assert state["box_used"] == 3 and state["players"][1]["purse"] == 4


def test_the_trigger_player_finishes_then_every_other_player_has_one_final_turn():
    """"The player who triggered the end game finishes their turn as normal, then all other
    players take one final turn." """
    state = started(3)
    state = play_turn(state)
    state["supply"] = 2
    state = act(state, "take_coins")
    assert state["active"] == 1 and trigger(state)[0] == 1
    state = act(state, "take_coins")
    assert state["active"] == 2 and not GAME.is_over(state)
    state = play_turn(state)
    assert state["active"] == 0 and not GAME.is_over(state)
    state = play_turn(state)
    assert GAME.is_over(state)
    assert GAME.legal_actions(state) == []


def test_filling_the_final_space_of_the_block_triggers_the_end():
    """"A player fills the final space in their 4×3 block." """
    state = started(2)
    colours = ("red", "blue", "yellow")
    spaces = [(c, r) for r in range(3) for c in range(4) if (c, r) not in ((0, 0), (3, 2))]
    cells = {(c, r): card(door, colours[(c + r) % 3])
             for (c, r), door in zip(spaces, ("F3", "F1", "S2", "S1", "C1") * 2, strict=True)}
    place_on(state, 0, cells)
    last = card("S2", colours[(3 + 2) % 3])
    state["players"][0]["hand"] = [last]
    state = act(state, "place", card=last, space=[3, 2])
    assert trigger(state) == (0, "block_full")
    state = act(state, "end_powers")
    state = act(state, "take_coins")
    assert state["active"] == 1 and not GAME.is_over(state)
    state = play_turn(state)
    assert GAME.is_over(state)


def test_an_exhausted_deck_that_can_not_refill_the_dock_triggers_the_end():
    """"The Dock can not be refilled because the Door deck has been exhausted." """
    state = started(2)
    state["deck"] = []
    assert trigger(state) is None
    dock = list(state["dock"])
    state = act(state, "buy", slot=0, from_vault=0)
    assert state["dock"] == [*dock[1:], None]
    assert trigger(state) == (0, "deck_exhausted")
    state = act(state, "take_coins")
    state = play_turn(state)
    assert GAME.is_over(state)


def test_a_second_trigger_does_not_move_the_end():
    """"The game end is triggered when any of these three conditions occurs" (once: the
    first trigger fixes the final round)."""
    state = started(2)
    state["supply"] = 2
    state = act(state, "take_coins")
    state["deck"] = []
    state = act(state, "buy", slot=0, from_vault=0)
    assert trigger(state) == (0, "supply_empty")
    state = play_turn(state)
    assert GAME.is_over(state)


def test_the_last_turn_still_checks_the_hand_limit():
    """"If you have more than seven Doors in your hand, discard Doors of your choice until
    you have only seven." (also in the final round)"""
    state = started(2)
    state["supply"] = 2
    state = play_turn(state)
    state["players"][1]["hand"] = list(range(70, 78))
    state = play_turn(state)
    assert state["phase"] == "hand_limit"
    state = act(state, "discard", card=70)
    assert GAME.is_over(state)
