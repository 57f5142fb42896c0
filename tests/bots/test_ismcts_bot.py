"""The information-set MCTS bot (bots/python/ismcts_bot.py): `referee check-bot` passes it in
every game, its time comes from the decision's deadline or clock, it plays legal moves in
whole games of every 2-player setup and solo, and it beats the random bot. Its fast Aladino
playout policy picks the greedy bot's very move. Searches here are a few iterations each:
its strength against the greedy bots is measured in bench/search_bots.py."""

from __future__ import annotations

import random
import sys

import pytest

import engines
from bots.python import aladino_bot, random_bot
from bots.python.arena import bot_factory, duel, play
from bots.python.ismcts_bot import SAFETY_MS, IsmctsBot, Outcome, Search, think_ms
from bots.python.playout_policies import aladino_greedy
from bots.python.sdk import budget_ms
from referee.cli import main

SETUPS = [("aladino", 2, {}), ("aldabas", 2, {}), ("caravans", 2, {}),
          ("aldabas", 1, {"mode": "solo"})]


def ismcts_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "bots.python.ismcts_bot", "--port", "{port}", "--seed", "3",
            *extra]


@pytest.mark.parametrize("game", engines.names())
def test_check_bot_passes_the_ismcts_bot_in_every_game(process_bot, capsys, game):
    """Every setup of the game (all player counts, solo) and every phase, over HTTP."""
    with process_bot(ismcts_command("--iterations", "2")) as url:
        status = main(["check-bot", url, "--game", game, "--playouts", "1",
                       "--per-phase", "1"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "passed: " in out


def test_check_bot_passes_it_over_stdin_and_stdout(capsys):
    """`--stdio`: the line protocol of `referee bridge` and `cmd:` bots."""
    command = " ".join([sys.executable, "-m", "bots.python.ismcts_bot", "--stdio",
                        "--iterations", "2"])
    status = main(["check-bot", f"cmd:{command}", "--game", "caravans", "--playouts", "1",
                   "--per-phase", "1"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "passed: " in out


def test_searching_on_its_time_it_answers_within_the_deadline(process_bot, capsys):
    """No iteration count: the bot spends most of each decision's 1000 ms, never all of it
    (check-bot counts an answer after the deadline as a timeout)."""
    with process_bot(ismcts_command()) as url:
        status = main(["check-bot", url, "--game", "aladino", "--playouts", "1",
                       "--per-phase", "1", "--deadline-ms", "1000"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "TIMEOUT" not in out


def test_its_budget_comes_from_the_deadline_or_the_clock_with_a_margin_capped_by_move_ms():
    by_deadline = {"seat": 0, "deadline_ms": 2000}
    by_clock = {"seat": 1, "deadline_ms": 2000,
                "clock": {"remaining_ms": [9000, 4000], "increment_ms": 100,
                          "deadline_ms": 2000}}
    assert think_ms(by_deadline, None) == budget_ms(by_deadline) == 1600
    assert think_ms(by_clock, None) == budget_ms(by_clock) == 4000 / 20 + 80
    assert think_ms(by_deadline, 300) == 300
    assert think_ms({"seat": 0, "deadline_ms": 300}, None) == 300 - SAFETY_MS
    assert think_ms(by_clock, 1000) == 280
    assert think_ms(None, 250) == 250


def test_each_seat_is_rewarded_by_its_rank_and_its_margin_over_the_best_other_seat():
    """max^n: every seat's own reward; ranks 1, 1, 3 share the top; solo: the score."""
    outcome = Outcome.of({"scores": [30, 30, 12], "ranks": [1, 1, 3]})
    assert outcome.rank == [1.0, 1.0, 0.0]
    assert outcome.margin == [0.0, 0.0, -18.0]
    assert Outcome.of_scores([5, 9]) == Outcome([0.0, 1.0], [-4.0, 4.0])
    assert Outcome.of({"scores": [27], "ranks": [1]}) == Outcome([0.0], [27.0])


def test_a_search_stops_at_its_stop_even_with_iterations_to_go():
    """A stop already past: not one iteration, and the greedy bot's move stands."""
    game = engines.get("aladino")
    state = game.new_game(2, 11, {})
    view = game.observation(state, 0)
    search = Search(view, view["legal_actions"], random.Random(1))
    search.run(stop=0.0, iterations=50)
    assert search.iterations == 0
    assert search.best() == aladino_bot.choose_greedy(view, view["legal_actions"])


def test_a_fixed_count_gives_the_same_move_for_the_same_decision():
    game, rng = engines.get("caravans"), random.Random(4)
    state = game.new_game(2, 4, {})
    for _ in range(12):
        state = game.apply(state, rng.choice(game.legal_actions(state)))
    view = game.observation(state, game.current_seat(state))
    answers = [IsmctsBot(5, iterations=6).answer(view, view["legal_actions"])
               for _ in range(2)]
    assert answers[0].action == answers[1].action
    assert answers[0].info["iterations"] == 6


@pytest.mark.parametrize(("game_name", "players", "options"), SETUPS)
def test_every_move_of_whole_games_is_legal(game_name, players, options):
    """Two whole games per setup, the bot in seat 0 (the greedy bot in the other)."""
    game = engines.get(game_name)
    greedy = bot_factory(f"{game_name}_bot")(None)
    moves = 0

    def checked(observation: dict, legal_actions: list[dict]) -> dict:
        nonlocal moves
        action = bot.choose(observation, legal_actions)
        assert action in legal_actions
        moves += 1
        return action

    for seed in (21, 22):
        bot = IsmctsBot(seed, iterations=2)
        result = play(game, [checked, greedy][:players], seed, options, players)
        assert len(result["ranks"]) == players
    assert moves > 20


def test_it_beats_the_random_bot():
    tally = duel(engines.get("aldabas"), lambda seed: IsmctsBot(seed, iterations=2).choose,
                 random_bot.make_choose, games=4, first_seed=40)
    assert tally.wins == 4, tally.summary()


def test_the_fast_aladino_playout_policy_picks_the_greedy_bots_move():
    """On every decision of a few games (moves, Carpet flights, Genies; 2 to 4 players)."""
    game, rng = engines.get("aladino"), random.Random(2)
    compared = 0
    for seed in range(6):
        state = game.new_game(2 + seed % 3, seed, {})
        while not game.is_over(state):
            view = game.observation(state, game.current_seat(state))
            legal = view["legal_actions"]
            greedy = aladino_bot.choose_greedy(view, legal)
            assert aladino_greedy(view, legal) == greedy
            compared += 1
            state = game.apply(state, greedy if rng.random() < 0.5 else rng.choice(legal))
    assert compared > 150
