"""The training loop of docs/bots.md ("Training data: `referee export`") runs as printed: its
code is read from the doc and given export records of every game (a substituted move and a
forfeit among them), each replayed through the engine."""

from __future__ import annotations

from referee.match.runner import FailurePolicy
from tests.support.decision_records import (
    bot_seat,
    malformed_at,
    play,
    read_ndjson,
    silent_at,
    write_ndjson,
)
from tests.support.docs import run_python_block


def documented_loop() -> dict:
    """The names the doc's first Python block after its heading defines."""
    return run_python_block("## Training data: `referee export`")


def test_the_documented_loop_replays_every_exported_decision(tmp_path):
    seats = [bot_seat("bot-a"), bot_seat("bot-b")]
    records = [play(game, seed, seats, f"m-{game}-{seed}") for game in ("aladino", "aldabas",
                                                                         "caravans")
               for seed in (1, 2)]
    records.append(play("aldabas", 3, seats, "m-random", choose=malformed_at({5}),
                        policy=FailurePolicy.uniform("random")))
    records.append(play("caravans", 3, seats, "m-forfeit", choose=silent_at(8)))
    records.append(play("aladino", 4, seats, "m-v1", version="1.0.0"))  # skipped: old rules
    path = tmp_path / "export.ndjson"
    write_ndjson(path, records)

    loop = documented_loop()
    replayed = list(loop["examples"](str(path)))
    written = [record for record in read_ndjson(path.read_bytes())
               if record["match_id"] != "m-v1"]
    assert len(replayed) == sum(1 for record in written if record["action"] is not None)
    assert [action for _, action, _, _ in replayed] == [
        record["action"] for record in written if record["action"] is not None]

    value = loop["train"](str(path))
    assert value and all(0 <= v <= 1 for v in value.values())
    assert {kind for _, kind in value} >= {"move", "take_coins"}  # Aladino's, Aldabas'
