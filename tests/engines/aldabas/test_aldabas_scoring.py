"""Final scoring (rulebook "Scoring") and the tie-breaks."""

from engines.aldabas.scoring import places, score_holders
from engines.aldabas.table import new_holder
from tests.engines.aldabas.aldabas_helpers import GAME, at, card, started


def holder(block: dict | None = None, coins: dict | None = None, **fields) -> dict:
    h = new_holder()
    for (col, row), door in (block or {}).items():
        h["block"][at(col, row)] = door
    for (col, row), count in (coins or {}).items():
        h["coins"][at(col, row)] = count
    h.update(fields)
    return h


def test_vault_coins_score_two_points_each_then_join_the_purse():
    """"Score 2 points for each Coin in your Vault, then move them to your purse. (Example:
    the three Coins in your Vault earn you 6 points.)" """
    rich = holder(vault_coins=3, purse=1, vault_cards=[card("N2", "red")])
    poor = holder(purse=10, vault_cards=[card("F3", "red")])
    first, second = score_holders([rich, poor], 2, award_second=True)
    assert first["vault_coin_points"] == 6
    assert first["purse_at_end"] == 4
    assert first["professions"]["noble"]["points"] == 4, "Nobles count the vault coins"
    assert second["professions"]["noble"]["points"] == 0, "needs one noble influence"


def test_soldiers_example_nine_influence_and_two_nobles_score_six():
    """"You have a total of 9 Soldier Influence: 5 from Influence on the Soldiers in your
    block, 2 from Coins on those Soldiers, and 2 from a Soldier that was in your Vault. ...
    The primary condition for Soldiers will score you 3 points for every Noble card in your
    block. You have two Nobles in your block, so you score 6 points!" """
    you = holder(
        block={(1, 0): card("S2", "red"), (2, 0): card("S2", "blue"),
               (0, 1): card("S1", "blue"), (1, 1): card("N2", "yellow"),
               (2, 1): card("N3", "red")},
        coins={(1, 0): 1, (0, 1): 1},
        vault_cards=[card("S2", "yellow")],
    )
    other = holder(block={(1, 0): card("S2", "red", 1), (2, 0): card("S2", "blue", 1)},
                   vault_cards=[card("N3", "blue")])
    mine = score_holders([you, other], 2, award_second=True)[0]["professions"]["soldier"]
    assert mine == {"influence": 9, "place": 1, "points": 6}


def test_ties_for_most_all_score_primary_and_nobody_scores_second():
    """"If any players tie for most, they all score the primary condition and nobody scores
    for second-most." """
    assert places([4, 4, 2], award_second=True) == [1, 1, None]


def test_ties_for_second_all_score_secondary():
    """"If there is no tie for most and any players tie for second-most, they all score the
    secondary condition." """
    assert places([5, 3, 3, 1], award_second=True) == [1, 2, 2, None]


def test_at_least_one_influence_is_needed_to_score_a_profession():
    """"You must have at least one Influence in a Profession to be eligible to score it." """
    assert places([2, 0, 0], award_second=True) == [1, None, None]
    assert places([0, 0], award_second=True) == [None, None]


def test_each_profession_primary_and_secondary_condition():
    """The Doors: Soldiers "1st: 3 points per Noble ... 2nd: 1 point per Noble"; Fishers
    "1st: 1 point per Influence in your hand. 2nd: 1 point per 2 Influence in your hand";
    Nobles "1st: 1 point per Coin in your purse. 2nd: 1 point per 2 Coins"; Clergy "1st: 1
    point per 3 Influence* in your block. 2nd: 1 point per 5"; Builders "1st: 1 point per
    non-Builder in your block. 2nd: 1 point per 2 non-Builders". """
    block = {(1, 0): card("S2", "red"), (2, 0): card("C1", "blue"),
             (0, 1): card("F1", "blue"), (1, 1): card("N2", "yellow"),
             (2, 1): card("B2B", "red"), (3, 0): card("B2B", "yellow")}
    hand = [card("F3", "red"), card("F3", "blue"), card("F1", "red")]
    strong = holder(block=block, coins={(2, 0): 4}, hand=hand, purse=7)
    weak = holder(block={(1, 0): card("S1", "red"), (2, 0): card("C1", "red"),
                         (0, 1): card("F1", "red"), (1, 1): card("N2", "red"),
                         (2, 1): card("B2B", "blue")},
                  hand=hand, purse=7)
    first, second = score_holders([strong, weak], 2, award_second=True)
    points = {p: (first["professions"][p]["points"], second["professions"][p]["points"])
              for p in first["professions"]}
    # weak: block influence 1+1+1+2+2 = 7, 4 non-builders, 1 noble, hand influence 7.
    assert points["soldier"] == (3 * 1, 1 * 1)
    assert points["clergy"] == ((2 + 5 + 1 + 2 + 2 + 2) // 3, 7 // 5)
    assert points["builder"] == (4, 4 // 2)
    fisher_tie = {"fisher": (7, 7), "noble": (7, 7)}
    for prof, expected in fisher_tie.items():
        assert points[prof] == expected, "tied for most: both score the primary condition"


def test_noble_3_bonus_and_most_total_influence():
    """Noble 3: "Gain 3 points during final scoring." and "The player(s) with the most total
    Influence (from the same sources as Profession-based Influence) scores 3 points." """
    a = holder(block={(1, 0): card("N3", "red"), (2, 0): card("N3", "blue")})
    b = holder(block={(1, 0): card("F3", "red"), (2, 0): card("F3", "blue")})
    c = holder(vault_cards=[card("N3", "yellow")])
    first, second, third = score_holders([a, b, c], 3, award_second=True)
    assert first["n3_bonus"] == 6 and second["n3_bonus"] == 0
    assert third["n3_bonus"] == 0, "an Ongoing Ability works from the block, not the vault"
    assert [x["most_influence_points"] for x in (first, second, third)] == [3, 3, 0]


def test_the_winner_has_most_points_and_a_tie_goes_to_most_coins_in_purse():
    """"The player with the most points wins! In the event of a tie, the tied player with
    the most Coins in their purse wins. If that's still a tie, the tied players share the
    victory." """
    state = started(3)
    state["phase"], state["active"] = "over", None
    for seat, purse in enumerate((3, 5, 3)):
        state["players"][seat].update(purse=purse, hand=[], vault_cards=[], vault_coins=0)
    result = GAME.result(state)
    # Nobles: seat 1 has no Noble influence, so nobody scores; every score is the same 0.
    assert result["scores"] == [0, 0, 0]
    assert result["ranks"] == [2, 1, 2]
    assert set(result["details"]["players"][0]) >= {
        "vault_coin_points", "professions", "n3_bonus", "most_influence_points", "total"}
