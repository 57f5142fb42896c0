"""The Node.js random bot (a real `node` process) plays a full match of every game through
the referee's runner: the protocol needs nothing from Python."""

import pytest

import engines
from referee.runner import FailurePolicy, PushSeat, run_match


def _smallest_setups():
    """Per game, the fewest players of each mode (e.g. 2p, and 1p solo for Aldabas)."""
    for name in engines.names():
        by_options = {}
        for variant in engines.get(name).variants():
            key = repr(sorted(variant["options"].items()))
            by_options.setdefault(key, variant)
        for variant in by_options.values():
            yield pytest.param(name, variant, id=f"{name}-{variant['num_players']}p")


@pytest.mark.parametrize(("game", "variant"), list(_smallest_setups()))
def test_node_bot_plays_a_full_match(node_bot_url, game, variant):
    seats = [PushSeat(node_bot_url, deadline_ms=3000) for _ in range(variant["num_players"])]
    try:
        record = run_match(game, 11, variant["options"], seats, FailurePolicy(),
                           match_id=f"node-{game}")
    finally:
        for seat in seats:
            seat.close()
    assert record["forfeit"] is None
    assert all(step["fault"] is None for step in record["steps"])
    assert record["steps"] and record["result"]["ranks"]
    engine = engines.get(game)
    state = engine.new_game(variant["num_players"], 11, variant["options"])
    for step in record["steps"]:
        state = engine.apply(state, step["action"])
    assert engine.is_over(state) and engine.result(state) == record["result"]
