"""Aladino rules; each test cites the rulebook (seeds/002) or rules/aladino.md passage."""

import json
import random

import pytest

import engines
from engines.aladino import scoring
from engines.aladino.components import CELLS, KINDS, TOKENS
from tests.engines.aladino.aladino_helpers import (
    GAME,
    aladdin,
    blank,
    fill,
    genie,
    move,
    put,
    token,
)

E, NE, NW, W, SW, SE = range(6)
RUBY4 = token("ruby", 4)


def plain(kind: str, value: int, nth: int = 0) -> int:
    return token(kind, value, None, nth)


# ----- setup -------------------------------------------------------------------------------
def test_setup_scatters_sixty_tokens_and_aladdin_starts_on_the_empty_space():
    """rules/aladino.md: "61 tokens, one per space ... the Aladdin token's space is the start,
    and that space is empty from then on." Rulebook: "there will be face-down tokens ... and
    face-up tokens"."""
    state = GAME.new_game(num_players=2, seed=5, options={})
    assert len(CELLS) == 61
    assert sorted(t for t in state["cells"] if t is not None) == list(range(60))
    assert state["cells"][state["aladdin"]] is None
    faces = {state["up"][t] for t in range(60)}
    assert faces == {True, False}


def test_face_down_tokens_show_only_their_back():
    """Rulebook: "face-down tokens, showing the kind of treasure they hide"; rules: "A face-down
    token shows only its back: its kind, or a lamp for a Genie"."""
    state = blank()
    put(state, (1, 0), token("ruby", 5, "sorcerer"), up=False)
    put(state, (2, 0), genie(), up=False)
    put(state, (3, 0), RUBY4, up=True)
    cave = {tuple(s["space"]): s["token"] for s in GAME.observation(state, 1)["cave"]}
    assert cave[(1, 0)] == {"face": "down", "back": "ruby"}
    assert cave[(2, 0)] == {"face": "down", "back": "lamp"}
    assert cave[(3, 0)]["value"] == 4 and cave[(3, 0)]["face"] == "up"
    assert "sorcerer" not in json.dumps(GAME.observation(state, 0)["cave"])


# ----- movement ----------------------------------------------------------------------------
def test_empty_spaces_are_passed_over_uncounted():
    """Rulebook: "always through squares with Treasure tokens on them. Empty squares must be
    passed over without being counted.\""""
    state = blank(roll=2)
    put(state, (2, 0), plain("ruby", 1))
    put(state, (4, 0), RUBY4)
    after = move(state, E)
    assert aladdin(after) == (4, 0)
    assert after["boards"][0][KINDS.index("ruby")][3] == [RUBY4]


def test_movement_is_completed_when_possible():
    """Rulebook: "As long as it is possible, the movement must be fully completed according to
    the result"."""
    state = blank(roll=2)
    for q in (1, 2, 3):
        put(state, (q, 0), plain("pearl", q))
    assert aladdin(move(state, E)) == (2, 0)


def test_a_roll_longer_than_the_line_stops_at_the_wall_on_the_last_token():
    """Rulebook: "the movement must stop if a player reaches the wall of the cave"; rules: "If the
    wall comes before the count is complete, Aladdin stops on the last token space he reached.\""""
    state = blank(roll=4)
    put(state, (1, 0), plain("pearl", 1))
    put(state, (3, 0), plain("pearl", 2))
    after = move(state, E)
    assert aladdin(after) == (3, 0)
    assert after["cells"][state["aladdin"]] is None


def test_moves_are_in_straight_lines_along_the_six_directions():
    """Rulebook: "The movement must be in a straight line, following the coincident sides of the
    hexagons"; rules: "the six directions are the six neighbours"."""
    state = blank(roll=1)
    targets = {E: (2, 0), NE: (2, -2), NW: (0, -3), W: (-1, 0), SW: (-4, 4), SE: (0, 2)}
    for i, space in enumerate(targets.values()):
        put(state, space, plain(KINDS[i % 4], 1 + i // 4))
    put(state, (1, 1), RUBY4)  # off every line: never reachable
    assert [a["direction"] for a in GAME.legal_actions(state)] == [E, NE, NW, W, SW, SE]
    for direction, space in targets.items():
        assert aladdin(move(state, direction)) == space


def test_a_direction_without_tokens_is_illegal():
    """rules/aladino.md: "A direction is legal only if at least one token lies along it.\""""
    state = blank(roll=3)
    put(state, (1, 0), RUBY4)
    assert GAME.legal_actions(state) == [{"type": "move", "direction": E}]
    with pytest.raises(engines.IllegalAction, match="no token lies W"):
        move(state, W)


def test_taking_a_token_turns_it_face_up_and_places_it_by_kind_and_value():
    """Rulebook: "draws the Treasure token of the square they just stopped on and flips it over
    if it was face down ... placed ... depending on the kind of treasure it is and the number it
    has." and "More than one token may be stacked in the same square"."""
    state = blank(roll=1)
    emerald3 = plain("emerald", 3)
    put(state, (1, 0), emerald3, up=False)
    fill(state, 0, "emerald", 3, plain("emerald", 3, 1))
    after = move(state, E)
    assert after["up"][emerald3] is True
    assert after["boards"][0][KINDS.index("emerald")][2] == [plain("emerald", 3, 1), emerald3]
    assert after["cells"][state["aladdin"] + 1] is None
    assert after["turn"] == 1, "the player to the left is now the active player"


# ----- characters --------------------------------------------------------------------------
def test_the_genie_goes_on_any_square_the_player_chooses():
    """Rulebook: "The Genie is the only exception: he can be placed on any square on the Player
    Board.\""""
    state = blank(roll=1)
    put(state, (1, 0), genie())
    put(state, (3, 0), RUBY4)
    after = move(state, E)
    assert after["phase"] == "place_genie" and after["turn"] == 0
    assert len(GAME.legal_actions(after)) == 20
    placed = GAME.apply(after, {"type": "place_genie", "kind": "pearl", "value": 5})
    assert placed["boards"][0][KINDS.index("pearl")][4] == [genie()]
    assert placed["scores"][0] == 0 and placed["turn"] == 1
    with pytest.raises(engines.InvalidAction, match="\"kind\" must be one of"):
        GAME.apply(after, {"type": "place_genie", "kind": "gold", "value": 5})


def test_titi_rolls_and_moves_again():
    """Rulebook: Titi tokens "allow the player to roll the die and move Aladdin again to get a
    second Treasure token.\""""
    state = blank(roll=1)
    put(state, (1, 0), token("ruby", 2, "titi"))
    put(state, (2, 0), RUBY4)
    after = move(state, E)
    assert after["turn"] == 0 and after["phase"] == "move"
    rolls = [e for e in after["log"] if e["event"] == "roll"]
    assert len(rolls) == 1 and after["roll"] == rolls[0]["value"]


def test_titi_abilities_chain():
    """rules/aladino.md: "Abilities chain (a Titi taken by a Titi move rolls again).\""""
    state = blank(roll=1)
    put(state, (1, 0), token("ruby", 2, "titi"))
    put(state, (2, 0), token("pearl", 2, "titi"))
    put(state, (3, 0), RUBY4)
    state = move(state, E)
    state["roll"] = 1
    state = move(state, E)
    assert aladdin(state) == (2, 0) and state["turn"] == 0 and state["phase"] == "move"
    state["roll"] = 1
    state = move(state, E)
    assert state["turn"] == 1


def test_a_titi_roll_with_no_legal_direction_ends_the_game():
    """rules/aladino.md: "a Titi roll with no legal direction ends the game"; rulebook: the game
    ends when "A player cannot move along the Treasure tokens following the movement rules.\""""
    state = blank(roll=1)
    put(state, (1, 0), token("ruby", 2, "titi"))
    put(state, (0, 2), RUBY4)  # not on any line from (1, 0)
    after = move(state, E)
    assert GAME.is_over(after)
    assert GAME.result(after)["details"]["end"]["reason"] == "no_move"


def test_the_magic_carpet_takes_any_token_without_a_visible_character():
    """Rulebook: the Magic Carpet allows "to move Aladdin to any Treasure token on the board to get
    a second token, as long as it hasn't a visible character on it.\""""
    state = blank(roll=1)
    carpet = token("ruby", 1, "carpet")
    hidden_sorcerer = token("pearl", 5, "sorcerer")
    visible_princess = token("pearl", 3, "princess")
    put(state, (1, 0), carpet)
    put(state, (-3, 3), hidden_sorcerer, up=False)
    put(state, (0, -4), visible_princess, up=True)
    put(state, (2, 2), RUBY4, up=True)
    after = move(state, E)
    assert after["phase"] == "carpet"
    assert {tuple(a["space"]) for a in GAME.legal_actions(after)} == {(-3, 3), (2, 2)}
    with pytest.raises(engines.IllegalAction, match="shows a character"):
        GAME.apply(after, {"type": "carpet", "space": [0, -4]})
    with pytest.raises(engines.IllegalAction, match="empty"):
        GAME.apply(after, {"type": "carpet", "space": [0, 0]})
    flown = GAME.apply(after, {"type": "carpet", "space": [-3, 3]})
    assert aladdin(flown) == (-3, 3)
    assert flown["boards"][0][KINDS.index("pearl")][4] == [hidden_sorcerer]
    assert flown["turn"] == 1


def test_a_carpet_with_nothing_to_choose_does_nothing():
    """rules/aladino.md: "A Carpet with no token to choose does nothing.\""""
    state = blank(roll=1, num_players=3)
    put(state, (1, 0), token("ruby", 1, "carpet"))
    put(state, (3, 0), token("pearl", 2, "titi"), up=True)
    after = move(state, E)
    assert after["phase"] == "move" and after["turn"] == 1


def test_the_evil_sorcerer_subtracts_three_points():
    """Rulebook: Evil Sorcerer tokens "don't grant the indicated 5 points. They subtract 3
    Treasure points from the player\""""
    state = blank(roll=1)
    put(state, (1, 0), token("pearl", 5, "sorcerer"))
    put(state, (3, 0), RUBY4)
    assert move(state, E)["scores"][0] == -3


def test_princess_scores_two_with_the_favourite_and_two_beside_a_carpet():
    """Rulebook: the Princess grants "2 additional Treasure points when they show the favourite
    treasure of the player, instead of 1 as usual. On the other hand, if there is a Magic Carpet
    token on the same row as the Princess on the Player Board, the player scores 2 additional
    points.\""""
    board = scoring.empty_board()
    board[0][2].append(token("emerald", 3, "princess"))
    assert scoring.breakdown(board, "emerald")["favourite"] == 2
    assert scoring.score(board, "emerald") == 3 + 2
    assert scoring.score(board, "ruby") == 3
    board[0][0].append(token("emerald", 1, "carpet"))
    assert scoring.breakdown(board, "ruby")["princess_carpet"] == 2
    board[1][0].append(token("ruby", 1, "carpet"))  # another row: no extra bonus
    assert scoring.breakdown(board, "ruby")["princess_carpet"] == 2


def test_favourite_treasure_scores_one_extra_and_a_genie_never_does():
    """Rulebook: "Each time a player gets their favourite Treasure token, they score 1 additional
    Treasure point plus the points indicated on that token." rules: "a Genie is never a favourite
    token".  Seat 1's favourite is ruby."""
    state = blank(roll=1)
    state["turn"] = 1
    put(state, (1, 0), RUBY4)
    put(state, (3, 0), plain("pearl", 1))
    assert move(state, E)["scores"][1] == 4 + 1
    board = scoring.empty_board()
    board[1][3].append(genie())
    assert scoring.score(board, "ruby") == 0


def test_complete_rows_and_columns_score_five_each():
    """Rulebook: "If a row or a column is completely filled in, you get 5 additional Treasure
    points." rules: row = 5 squares, column = 4 squares."""
    board = scoring.empty_board()
    for value in range(1, 6):
        board[3][value - 1].append(plain("pearl", value))
    assert scoring.breakdown(board, "emerald")["rows"] == 5
    assert scoring.breakdown(board, "emerald")["columns"] == 0
    for kind in range(3):
        board[kind][3].append(plain(KINDS[kind], 4))
    parts = scoring.breakdown(board, "emerald")
    assert parts["columns"] == 5 and parts["rows"] == 5


def test_every_trio_on_a_square_scores_three_and_a_genie_counts():
    """Rulebook: "It is allowed to stack similar tokens ... If you get a trio, score 3 additional
    Treasure points." rules: "+3 for every three tokens stacked on one square (a Genie on a
    square counts as a token of that square's kind and value)"."""
    board = scoring.empty_board()
    board[2][3].extend([plain("sapphire", 4, 0), plain("sapphire", 4, 1)])
    assert scoring.breakdown(board, "emerald")["trios"] == 0
    board[2][3].append(genie())
    assert scoring.breakdown(board, "emerald")["trios"] == 3
    board[2][3].extend([plain("sapphire", 4, 2), genie(1), genie(2)])
    assert scoring.breakdown(board, "emerald")["trios"] == 6


def test_score_is_the_sum_of_all_parts():
    """rules/aladino.md: "A player's score is a function of their board alone"."""
    board = scoring.empty_board()
    board[0][2].append(token("emerald", 3, "princess"))
    board[0][0].append(token("emerald", 1, "carpet"))
    board[0][4].append(token("emerald", 5, "sorcerer"))
    # tokens 3 + 1 - 3, favourite 2 + 1 + 1, princess beside a carpet 2
    assert scoring.score(board, "emerald") == 1 + 4 + 2


# ----- end of the game ---------------------------------------------------------------------
def test_the_game_ends_when_the_player_to_move_has_no_legal_direction():
    """Rulebook: the game ends when "A player cannot move along the Treasure tokens following the
    movement rules.\""""
    state = blank(roll=1)
    put(state, (1, 0), RUBY4)
    put(state, (0, 2), plain("pearl", 1))  # not on a line from (1, 0)
    after = move(state, E)
    assert GAME.is_over(after) and GAME.current_seat(after) is None
    assert after["end"]["reason"] == "no_move" and after["end"]["seat"] == 1


def test_the_game_ends_at_fifty_points():
    """Rulebook: the game ends when "A player reaches 50 points on the Scoring track"; the rules
    end it at once, before any ability."""
    state = blank(roll=1)
    board = state["boards"][0]
    for value in (1, 2, 3):
        board[0][value - 1].append(plain("emerald", value))  # 6 + 3 favourite
    for value in (1, 2, 3, 4, 5):
        board[3][value - 1].append(plain("pearl", value))  # 15 + 5 row
    board[1][3].extend([plain("ruby", 4, 1), plain("ruby", 4, 2)])  # 8
    # 9 + 20 + 8 = 37 before the move; a Titi ruby 2 adds 2; nearly there
    board[2][3].extend([plain("sapphire", 4, 0), plain("sapphire", 4, 1)])  # 45
    put(state, (1, 0), token("emerald", 2, "titi"))  # +2 +1 favourite = 48: not yet
    put(state, (2, 0), RUBY4)  # +4 +3 trio
    after = move(state, E)
    assert after["scores"][0] == 48 and not GAME.is_over(after)
    after["roll"] = 1
    final = move(after, E)
    assert final["scores"][0] == 55
    assert GAME.is_over(final) and final["end"]["reason"] == "score_50"
    assert GAME.result(final)["ranks"] == [1, 2]


def test_the_game_ends_when_a_board_is_full():
    """Rulebook: the game ends when "A player fills in all the squares on their Player Board."
    A full board always holds 50 points or more, so both ends come at once; the reason names the
    full board."""
    state = blank(roll=1)
    board = state["boards"][0]
    used = set()
    for k, kind in enumerate(KINDS):
        for value in range(1, 6):
            if (kind, value) == ("ruby", 4):
                continue
            t = next(x.id for x in TOKENS if (x.kind, x.value) == (kind, value)
                     and x.character in (None, "sorcerer") and x.id not in used)
            used.add(t)
            board[k][value - 1].append(t)
    put(state, (1, 0), RUBY4)
    put(state, (2, 0), plain("pearl", 4, 2))
    after = move(state, E)
    assert GAME.is_over(after) and after["end"]["reason"] == "board_full"


def test_most_points_wins_and_a_tie_is_shared():
    """Rulebook: "The player who has the most Treasure points wins the game." rules: "a tie is
    shared"."""
    state = blank(num_players=3, roll=1)
    state["scores"] = [7, 7, 3]
    state["phase"] = "over"
    state["end"] = {"reason": "no_move", "seat": 0, "text": ""}
    assert GAME.result(state)["ranks"] == [1, 1, 3]


def test_players_take_turns_to_the_left():
    """Rulebook: "the player to their left is now the active player"."""
    state = blank(num_players=3, roll=1)
    for q in (1, 2, 3, 4):
        put(state, (q, 0), plain("pearl", q))
    seats = []
    for _ in range(3):
        seats.append(state["turn"])
        state["roll"] = 1
        state = move(state, E)
    assert seats == [0, 1, 2] and state["turn"] == 0


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_thousand_random_playouts_finish(players):
    """Acceptance of the Foundation issue: 1,000 random playouts per player count."""
    ends = set()
    for seed in range(1000):
        chooser = random.Random(seed)
        state = GAME.new_game(num_players=players, seed=seed, options={})
        for _ in range(400):
            if GAME.is_over(state):
                break
            state = GAME.apply(state, chooser.choice(GAME.legal_actions(state)))
        assert GAME.is_over(state), f"seed {seed} did not finish"
        ends.add(state["end"]["reason"])
    assert ends <= {"no_move", "score_50", "board_full"}
