"""Caravans trade offers; each test quotes the rulebook (seeds/003) or rules/caravans.md."""

import pytest

import engines
from tests.engines.caravans.caravans_helpers import GAME, act, action_phase, card, give_cards


def offer(state: dict, to: int, give: dict | None = None, take: dict | None = None) -> dict:
    return GAME.apply(state, {"type": "offer_trade", "to": to, "give": give or {},
                              "take": take or {}})


def test_an_accepted_trade_swaps_what_was_offered():
    """Rulebook: "A player may initiate a trade with another player. The terms of this trade are
    entirely up to the participants"; rules: "the other player accepts or declines (a decision of
    theirs, taken at once)"."""
    state = action_phase(seat=0)
    ivory, gems = card("ivory", "red"), card("gems", "blue")
    give_cards(state, 0, ivory)
    give_cards(state, 2, gems)
    state["eyes"] = 0
    state = offer(state, 2, give={"cards": [ivory], "eyes": True, "gold": 2},
                  take={"card_types": ["gems"], "passages": ["yellow"]})
    assert GAME.current_seat(state) == 2
    assert GAME.legal_actions(state) == [{"type": "accept_trade"}, {"type": "decline_trade"}]
    assert ivory in GAME.observation(state, 1)["known_cards"][0], "offered cards are shown"
    gold = list(state["gold"])
    state = act(state, "accept_trade")
    assert ivory in state["hands"][2] and gems in state["hands"][0]
    assert state["eyes"] == 2 and state["rop"]["yellow"] == 0
    assert state["gold"][0] == gold[0] - 2 and state["gold"][2] == gold[2] + 2
    assert GAME.current_seat(state) == 0 and state["actions"]["acted"]


def test_accepting_needs_the_cards_asked_for():
    """Rulebook: "The only rule is that a player may not give another player his/her own right of
    passage"; rules: an offer of things "in exchange for the same kinds of things"; an offer
    cannot be accepted with cards one does not hold."""
    state = action_phase(seat=0)
    state["hands"][1] = [card("metal", "blue")]
    state = offer(state, 1, give={"gold": 1}, take={"card_types": ["silk"]})
    assert GAME.legal_actions(state) == [{"type": "decline_trade"}]
    with pytest.raises(engines.IllegalAction, match="do not hold"):
        act(state, "accept_trade")
    with pytest.raises(engines.IllegalAction, match="accept_trade or decline_trade"):
        act(state, "end_actions")


def test_a_declined_offer_is_not_an_action():
    """Rules: "after an action phase in which nobody took an action (a declined offer is not an
    action)" the game ends."""
    state = action_phase(num_players=2, seat=0)
    state = offer(state, 1, give={"gold": 1})
    state = act(state, "decline_trade")
    assert state["gold"][0] == 5 and not state["actions"]["acted"]
    state = act(state, "end_actions")
    state = act(state, "end_actions")
    assert GAME.is_over(state) and state["end"]["reason"] == "no_actions"


def test_nobody_hands_a_player_their_own_right_of_passage():
    """Rulebook: "a player may not give another player his/her own right of passage"; "A player
    may never bid on their own right of passage, nor may they acquire it through trade.\""""
    state = action_phase(seat=0)  # seat 0 (red) holds blue; seat 3 holds red
    with pytest.raises(engines.IllegalAction, match="own right of passage"):
        offer(state, 1, give={"passages": ["blue"]})
    with pytest.raises(engines.IllegalAction, match="own right of passage"):
        offer(state, 3, take={"passages": ["red"]})
    state = offer(state, 2, give={"passages": ["blue"]})
    state = act(state, "accept_trade")
    assert state["rop"]["blue"] == 2


def test_only_held_things_can_be_offered_or_asked_for():
    """Rulebook: "you may never buy, sell, or trade your controlled cities or controlled
    routes"; rules: an offer "of gold, cards, RoPs, the Eyes, the Pirate Queen or the Shah"."""
    state = action_phase(seat=0)
    foreign = state["hands"][1][0]
    refusals = [
        ({"give": {"cards": [foreign]}}, "do not hold the card"),
        ({"give": {"gold": 6}}, "only 5 gold"),
        ({"give": {"eyes": True}}, "not hold the eyes"),
        ({"give": {"passages": ["green"]}}, "not hold the green"),
        ({"take": {"shah": True}}, "not hold the shah"),
        ({"take": {"card_types": ["ivory"] * 4}}, "only 3 card"),
        ({"give": {"routes": ["red:ivory-metal"]}}, "no field"),
        ({"take": {"cities": ["red.ivory"]}}, "no field"),
        ({}, "give or ask for something"),
    ]
    for terms, reason in refusals:
        with pytest.raises(engines.EngineError, match=reason):
            offer(state, 1, **terms)
    with pytest.raises(engines.IllegalAction, match="another player"):
        offer(state, 0, give={"gold": 1})


def test_three_offers_per_player_per_action_phase():
    """Rules: "At most three offers per player per action phase.\""""
    state = action_phase(seat=0)
    for _ in range(3):
        state = offer(state, 1, give={"gold": 1})
        state = act(state, "decline_trade")
    assert not [a for a in GAME.legal_actions(state) if a["type"] == "offer_trade"]
    with pytest.raises(engines.IllegalAction, match="at most 3 offers"):
        offer(state, 1, give={"gold": 1})


def _offer_schema(description: dict) -> dict:
    return next(branch for branch in description["action_schema"]["oneOf"]
                if branch["title"] == "offer_trade")


def test_the_offer_schema_is_published():
    """Issue 4: "Trade offers are an open action kind: describe() publishes their JSON
    Schema\" (one branch of the game's action schema)."""
    description = GAME.describe()
    assert "offer_trade" in description["open_action_types"]
    schema = _offer_schema(description)
    assert schema["properties"]["type"] == {"const": "offer_trade"}
    assert set(schema["properties"]["give"]["properties"]) == {
        "gold", "cards", "passages", "eyes", "pirate_queen", "shah"}
    assert "card_types" in schema["properties"]["take"]["properties"]
    state = action_phase(seat=0)
    listed = [a for a in GAME.legal_actions(state) if a["type"] == "offer_trade"]
    assert listed[0] == {"type": "offer_trade", "to": 1,
                         "give": {"cards": [min(state["hands"][0])]}, "take": {"gold": 1}}


def test_the_offer_schema_states_what_apply_refuses_for_its_shape():
    """Issue 4: "describe() publishes their JSON Schema, apply validates them": a card or a
    right of passage listed twice is refused as malformed, so the schema says so
    (`uniqueItems`); asking for two cards of one type is fine, so `card_types` may repeat."""
    schema = _offer_schema(GAME.describe())["properties"]
    assert schema["give"]["properties"]["cards"].get("uniqueItems") is True
    assert schema["give"]["properties"]["passages"].get("uniqueItems") is True
    assert schema["take"]["properties"]["passages"].get("uniqueItems") is True
    assert not schema["take"]["properties"]["card_types"].get("uniqueItems")
    state = action_phase(seat=0)
    mine = state["hands"][0][0]
    with pytest.raises(engines.InvalidAction, match="lists a value twice"):
        offer(state, 1, give={"cards": [mine, mine]})
    state["hands"][1] = [card("gems", "blue", 0), card("gems", "blue", 1)]
    state = offer(state, 1, give={"gold": 1}, take={"card_types": ["gems", "gems"]})
    assert GAME.legal_actions(state)[0] == {"type": "accept_trade"}
