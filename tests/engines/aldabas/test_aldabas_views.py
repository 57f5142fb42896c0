"""What each seat sees (rulebook "Your Vault & Your Purse") and the published description."""

from engines.aldabas.rival import appraise
from engines.rng import Rng
from tests.engines.aldabas.aldabas_helpers import GAME, act, started


def test_a_seat_sees_its_own_hand_and_vault_and_only_sizes_of_others():
    """"Coins and cards in your Vault are secret from other players" and setup 2: "Keep your
    hand secret from other players." """
    state = started(3)
    state["players"][1]["vault_coins"] = 4
    seen = GAME.observation(state, 0)
    assert seen["you"]["hand"] == state["players"][0]["hand"]
    assert seen["you"]["vault_cards"] == state["players"][0]["vault_cards"]
    other = seen["players"][1]
    assert other == {"seat": 1, "purse": state["players"][1]["purse"], "hand_size": 4,
                     "vault_card_count": 1, "block": []}
    assert seen["deck_count"] == len(state["deck"]) and "deck" not in seen
    assert set(seen) == {
        "mode", "phase", "active", "turn", "actions_left", "pending_powers", "power", "supply",
        "box_used", "deck_count", "discard", "dock", "end_trigger", "players", "you", "game",
        "seat", "to_move", "legal_actions", "log", "end"}
    secrets = state["players"][1]["hand"] + state["players"][1]["vault_cards"]
    public_cards = seen["discard"] + [slot["card"] for slot in seen["dock"]]
    assert not set(secrets) & set(public_cards)


def test_hidden_variant_changes_only_what_the_seat_can_not_see():
    """"Coins and cards in your Vault are secret from other players" (the variant re-deals
    hands, vaults and deck; the seat's observation stays the same)."""
    state = act(started(2), "take_coins")
    variant = GAME.hidden_variant(state, 0, Rng(5))
    assert variant["players"][0] == state["players"][0]
    assert variant["players"][1]["hand"] != state["players"][1]["hand"]
    assert GAME.observation(variant, 0) == GAME.observation(state, 0)


def test_describe_lists_the_deck_dock_costs_scoring_and_actions():
    """"81 Door cards (each shows: Profession and Influence value, Aldaba, Door Power, Door
    color (red, blue, or yellow) ... and a No Solidad icon on some cards)" """
    described = GAME.describe()
    components = described["components"]
    assert len(components["cards"]) == 81
    assert components["deck_size"] == {"multi": 81, "solo": 48}
    assert sum(t["copies_per_colour"] for t in components["door_types"]) * 3 == 81
    assert components["dock_costs"] == {"multi": [0, 0, 1, 2, 3], "solo": [0, 1, 2, 3]}
    professions = [c["profession"] for c in components["cards"]]
    assert [professions.count(p) for p in ("fisher", "noble", "soldier", "clergy", "builder")] \
        == [27, 18, 18, 9, 9]
    assert set(described["actions"]) >= {a["type"] for a in GAME.legal_actions(started(2))}
    assert described["scoring"]


def test_appraisal_is_available_to_bots_through_public_data():
    """"A Door's value is: Its Influence value... Minus the Coin cost of the slot it is in...
    Plus 2 if the Aldaba on the card ... matches one of the Aldabas on a Rival Goal card." """
    state = started(1)
    seen = GAME.observation(state, 0)
    cards = {c["id"]: c for c in GAME.describe()["components"]["cards"]}
    goal_aldabas = {cards[g]["aldaba"] for g in seen["rival"]["goals"]}
    for slot in seen["dock"]:
        door = cards[slot["card"]]
        expected = door["influence"] - slot["cost"] + 2 * (door["aldaba"] in goal_aldabas)
        assert appraise(state, slot["card"], slot["cost"]) == expected


def test_describe_publishes_the_rivals_procedure():
    """"The Rival's turn follows these three steps in order." (Claim, Build, Advance the
    Dock) with "Minor changes to how the Rival uses the Powers" """
    solo = GAME.describe()["solo"]
    steps = [step.split(":")[0] for step in solo["rival_turn"]]
    assert steps == ["1. claim", "2. build", "3. advance"]
    assert set(solo["rival_powers"]) == {"S1", "S2", "F1", "C1", "F3, N3, B2B"}
