"""Aldabas Solidad, the solo mode (rulebook "Aldabas Solidad: Solo Mode")."""

import pytest

import engines
from engines.aldabas import rival
from engines.aldabas.components import CARD_TYPE, NO_SOLIDAD
from engines.aldabas.scoring import band, score_holders
from engines.aldabas.table import new_holder
from tests.engines.aldabas.aldabas_helpers import GAME, act, at, card, new, started, trigger


def solo_table(goals: list[int], dock: list[int]) -> dict:
    """A solo state whose Rival Goals and Dock are set by hand."""
    state = started(1)
    state["rival"]["goals"] = goals
    state["dock"] = dock
    return state


def all_cards(state: dict) -> list[int]:
    r = state["rival"]
    p = state["players"][0]
    pockets = [state["deck"], state["dock"], state["discard"], r["goals"], r["hand"],
               r["vault_cards"], p["hand"], p["vault_cards"], r["block"], p["block"]]
    return [c for pocket in pockets for c in pocket if c is not None]


def test_solo_setup_supply_deck_dock_goals_vault_and_hand():
    """"Place only fifteen Coins in the general supply." "removing all cards with the No
    Solidad icon ... 48 cards remain in the deck, leaving only two copies of each card." "Set
    up the Dock with only four cards" "drawing cards from the deck, one at a time, until
    three different Aldabas ... have been revealed" "Draw two cards and place them face up
    beside the Rival's Vault" """
    state = new(1, seed=4)
    assert state["supply"] == 15 and state["costs"] == [0, 1, 2, 3]
    cards = all_cards(state)
    assert len(cards) == len(set(cards)) == 48 and not any(NO_SOLIDAD[c] for c in cards)
    assert len({CARD_TYPE[g].aldaba for g in state["rival"]["goals"]}) == 3
    assert len(state["rival"]["hand"]) == 2 and len(state["rival"]["vault_cards"]) == 1
    assert len(state["dock"]) == 4 and None not in state["dock"]
    harder = new(1, seed=4, rival_extra_hand=2, extra_supply=5)
    assert len(harder["rival"]["hand"]) == 4 and harder["supply"] == 20


def test_solo_options_are_checked():
    """"To make the Rival more challenging, add more cards to the Rival's Hand during Setup.
    To make the game easier, add more Coins to the general supply." """
    with pytest.raises(engines.InvalidSetup):
        new(2, mode="solo")
    with pytest.raises(engines.InvalidSetup):
        new(1, extra_supply=-1)
    with pytest.raises(engines.InvalidSetup):
        new(1, mode="multi")
    with pytest.raises(engines.InvalidSetup):
        new(2, mode="multi", extra_supply=1)


def test_the_rival_plays_first():
    """"The Rival is the first player." """
    state = new(1, seed=3)
    state = act(state, "setup_vault", card=state["players"][0]["hand"][0])
    state = act(state, "setup_done")
    turns = [e["seat"] for e in GAME.observation(state, 0)["log"] if e["event"] == "turn"]
    assert turns == ["rival", 0]
    assert state["active"] == 0 and state["phase"] == "actions"


def appraisal_example() -> dict:
    blue_noble = card("N3", "blue")
    dock = [blue_noble, card("S2", "red"), card("F1", "red"), card("S1", "red")]
    goals = [card("F1", "yellow"), card("S1", "yellow"), card("C1", "yellow")]
    return solo_table(goals, dock)


def test_rival_appraisal_example_takes_the_blue_noble_from_the_zero_slot():
    """"the cards in the Dock have values 3-0+0 = 3, 2-1+0 = 1, 1-2+2 = 1, and 1-3+2 = 0.
    The Rival would therefore claim the Blue Noble from the zero-Coin slot." """
    state = appraisal_example()
    values = [rival.appraise(state, c, cost) for c, cost in zip(state["dock"], [0, 1, 2, 3],
                                                                 strict=True)]
    assert values == [3, 1, 1, 0]
    rival.claim(state)
    assert state["rival"]["hand"][-1] == card("N3", "blue")


def test_rival_appraisal_tie_takes_the_more_expensive_slot():
    """"If Doors are tied for highest value, the Rival takes the one in the more expensive
    slot. Then refill the Dock as usual." """
    goals = [card("F1", "yellow"), card("S1", "yellow"), card("C1", "yellow")]
    dock = [card("S2", "blue"), card("F3", "blue"), card("S2", "red"), card("F1", "red")]
    state = solo_table(goals, dock)  # values 2, 2, 0, 0
    top = state["deck"][-1]
    rival.claim(state)
    assert state["rival"]["hand"][-1] == card("F3", "blue")
    assert state["dock"] == [card("S2", "blue"), card("S2", "red"), card("F1", "red"), top]


def test_rival_builds_only_with_three_cards_the_leftmost_in_order_ignoring_colour():
    """"The Rival will only Build a Door if there are three or more Doors in its hand. If
    there are, take the leftmost card from the Rival's Hand, and place it in the next empty
    space." "spaces 1, 2, 3; then 4, 5, 6, 7; then 8, 9, 10, 11" "The Rival ignores Door
    color restrictions." """
    state = started(1)
    r = state["rival"]
    r["hand"] = [card("N3", "red"), card("N3", "red", 1)]
    r["block"] = new_holder()["block"]
    rival.build(state)
    assert r["block"] == new_holder()["block"]
    r["hand"].append(card("B2B", "red"))
    rival.build(state)
    assert r["block"][at(1, 0)] == card("N3", "red") and len(r["hand"]) == 2
    r["hand"].append(card("N2", "red"))
    rival.build(state)
    assert r["block"][at(2, 0)] == card("N3", "red", 1), "same colour side by side is fine"
    for door in (card("N2", "blue"), card("N2", "blue", 1)):
        r["hand"].append(door)
        rival.build(state)
    assert r["block"][at(3, 0)] is not None and r["block"][at(0, 1)] is not None


def rival_building(door: int, cells: dict | None = None) -> dict:
    """A solo state where the Rival is about to build `door` in space [1, 0]."""
    state = started(1)
    r = state["rival"]
    r["block"] = new_holder()["block"]
    for (col, row), other in (cells or {}).items():
        r["block"][at(col, row)] = other
    r["hand"] = [door, card("N3", "red"), card("N3", "blue")]
    return state


def test_rival_soldiers_take_coins_from_the_supply_and_nobles_add_one():
    """"Soldier (Influence 1): Place one Coin from the supply on the newly-built Door."
    "Soldier (Influence 2): Place one Coin from the supply in the Rival's Vault." "Noble
    (Influence 2, Ongoing Ability): Add an additional Coin from the supply to the Rival's
    Soldier actions." """
    state = rival_building(card("S1", "red"))
    supply = state["supply"]
    rival.build(state)
    assert state["rival"]["coins"][at(1, 0)] == 1 and state["supply"] == supply - 1
    state = rival_building(card("S2", "red"), {(0, 1): card("N2", "red")})
    vault = state["rival"]["vault_coins"]
    rival.build(state)
    assert state["rival"]["vault_coins"] == vault + 2


def test_rival_neighbour_powers_fire_too_soldier_coin_goes_on_the_new_door():
    """"Activate Powers on the newly-built Door and the surrounding cards as usual on behalf
    of the Rival" """
    state = started(1)
    r = state["rival"]
    r["block"] = new_holder()["block"]
    r["block"][at(1, 0)] = card("S1", "red")
    r["hand"] = [card("F3", "red"), card("N3", "red"), card("N3", "blue")]
    rival.build(state)
    assert r["block"][at(2, 0)] == card("F3", "red")
    assert r["coins"][at(2, 0)] == 1 and r["coins"][at(1, 0)] == 0


def test_rival_clergy_claims_and_builder_noble3_fisher3_do_nothing():
    """"Clergy: Perform the full Claim a Door step for the Rival." "Builder: No effect."
    "Noble (Influence 3): No effect." "Fisher (Influence 3): No effect." """
    state = rival_building(card("C1", "red"))
    claimed = state["dock"][rival.choose_claim(state)]
    rival.build(state)
    assert state["rival"]["hand"] == [card("N3", "red"), card("N3", "blue"), claimed]
    for door in (card("B2B", "red"), card("F3", "red"), card("N3", "yellow")):
        state = rival_building(door)
        before = (state["supply"], list(state["dock"]), len(state["deck"]))
        rival.build(state)
        assert (state["supply"], state["dock"], len(state["deck"])) == before
        assert len(state["rival"]["hand"]) == 2


def test_rival_fisher_keeps_the_more_valuable_draw_first_drawn_on_a_tie():
    """"Fisher (Influence 1): Draw two Doors. Add the more-valuable one (using the Rival's
    appraisal process) to the right of the Rival's Hand, and discard the other. If they are
    equally valuable, treat the first one drawn as more valuable." """
    goals = [card("F1", "yellow"), card("S1", "yellow"), card("C1", "yellow")]
    cases = [
        ([card("S1", "blue"), card("N2", "blue")], card("S1", "blue")),  # N2 = 2, S1 = 3
        ([card("N3", "blue"), card("S1", "blue")], card("S1", "blue")),  # 3 = 3: first
        ([card("S1", "blue"), card("N3", "blue")], card("N3", "blue")),  # 3 = 3: first
    ]
    for deck_top, kept in cases:
        state = rival_building(card("F1", "red"))
        state["rival"]["goals"] = goals
        state["deck"] += deck_top  # the last card is drawn first
        rival.build(state)
        assert state["rival"]["hand"][-1] == kept
        assert state["discard"][-1] == next(c for c in deck_top if c != kept)


def test_advancing_the_dock_discards_the_zero_slot_and_refills():
    """"Discard the Door from the cost-zero slot of the Dock, then refill the Dock as
    usual." """
    state = started(1)
    dock, top = list(state["dock"]), state["deck"][-1]
    rival.advance_dock(state)
    assert state["discard"][-1] == dock[0]
    assert state["dock"] == [*dock[1:], top]


def test_solo_end_scores_right_after_the_triggering_turn():
    """"The game end is triggered as normal. Complete the triggering player's turn and
    proceed to Scoring." """
    state = started(1)
    state["supply"] = 2
    state = act(state, "take_coins")
    assert trigger(state) == (0, "supply_empty")
    state = act(state, "take_coins")
    assert GAME.is_over(state)
    result = GAME.result(state)
    assert result["ranks"] == [1] and result["details"]["band"] == band(result["scores"][0])


def test_solo_scores_only_first_place_and_ties_with_the_rival_count_as_first():
    """"Only score a Profession if you win first place; second place is not awarded." """
    you = new_holder()
    you["block"][at(1, 0)] = card("S1", "red")
    you["block"][at(2, 0)] = card("N3", "blue")
    the_rival = new_holder()
    the_rival["block"][at(1, 0)] = card("S2", "red")
    the_rival["block"][at(2, 0)] = card("N3", "red")
    mine = score_holders([you, the_rival], 1, award_second=False)[0]["professions"]
    assert mine["soldier"] == {"influence": 1, "place": None, "points": 0}
    assert mine["noble"]["place"] == 1


@pytest.mark.parametrize(("score", "start"), [
    (0, "The citizens demand"), (29, "The citizens demand"), (30, "Cartagena survives"),
    (39, "Cartagena survives"), (40, "Cartagena grows"), (49, "Cartagena grows"),
    (50, "Cartagena flourishes"), (99, "Cartagena flourishes"),
])
def test_result_bands(score, start):
    """"0-29 ... 30-39 ... 40-49 ... 50+" (the Solo Scoring chart)"""
    assert band(score).startswith(start)


def test_the_rival_hand_and_goals_are_public_its_vault_card_is_not():
    """"Place the three cards face up above the dock" "place them face up beside the Rival's
    Vault" and "placing it face down underneath without looking at it." """
    state = started(1)
    seen = GAME.observation(state, 0)
    assert seen["rival"]["hand"] == state["rival"]["hand"]
    assert seen["rival"]["goals"] == state["rival"]["goals"]
    assert "vault_cards" not in seen["rival"] and seen["rival"]["vault_card_count"] == 1


def test_the_rival_filling_its_block_triggers_the_end():
    """"The game end is triggered as normal." (a filled block is one of the three triggers:
    "A player fills the final space in their 4×3 block.")"""
    state = started(1)
    r = state["rival"]
    r["block"] = [None] + [card("N3", "red")] * 10 + [None]
    r["hand"] = [card("N3", "blue"), card("N3", "yellow"), card("F3", "red")]
    state["active"] = "rival"
    rival.build(state)
    assert r["block"][11] == card("N3", "blue")
    assert trigger(state) == (None, "block_full")


def test_the_rival_triggering_the_end_finishes_its_turn_then_scoring():
    """"The game end is triggered as normal. Complete the triggering player's turn and
    proceed to Scoring." (here the Rival's Dock can not be refilled)"""
    state = started(1)
    state["deck"] = []
    state = act(act(state, "take_coins"), "take_coins")
    assert trigger(state) == (None, "deck_exhausted")
    log = GAME.observation(state, 0)["log"]
    last_turn = max(i for i, e in enumerate(log) if e["event"] == "turn")
    assert log[last_turn]["seat"] == "rival", "no player turn after the Rival's"
    assert [e["event"] for e in log[-2:]] == ["rival_advance", "end"]
    assert GAME.is_over(state)


def test_solo_most_total_influence_is_compared_with_the_rival():
    """"All scoring is the same as normal" and "The player(s) with the most total Influence
    ... scores 3 points." """
    you = new_holder()
    you["block"][at(1, 0)] = card("F3", "red")
    the_rival = new_holder()
    the_rival["block"][at(1, 0)] = card("N3", "red")
    the_rival["coins"][at(1, 0)] = 1
    mine = score_holders([you, the_rival], 1, award_second=False)[0]
    assert mine["total_influence"] == 3 and mine["most_influence_points"] == 0
    the_rival["coins"][at(1, 0)] = 0
    mine = score_holders([you, the_rival], 1, award_second=False)[0]
    assert mine["most_influence_points"] == 3, "a tie for most scores"
