"""The decisions a match's driver kept (issue 30, `referee.match.decisions.KeptDecisions`):
the observation and legal actions of every decision exactly as the driver sent them, stored
at the match's end so that the export reads them instead of playing the match again. They
give the very records the match played again gives, in every game, player count and rules
version; kept decisions that do not fit the record (a resumed match's, another match's,
damaged ones) are never read, and the match is played again instead."""

from __future__ import annotations

import random

import pytest
import zstandard

import engines
from referee.match.decisions import KEPT_MAGIC, MatchRecords, decisions, seat_mask, unpack_kept
from referee.match.runner import FailurePolicy, MatchPlay
from tests.support.decision_records import (
    bot_seat,
    keeping_the_log,
    malformed_at,
    play_keeping,
    random_move,
    silent_at,
)

SETUPS = [(game, version, variant) for game in engines.names()
          for version in engines.versions(game)
          for variant in engines.get(game, version).variants()]


def lines(record: dict, kept: bytes | None, seats: int = (1 << 16) - 1, start: int = 0
          ) -> list[bytes]:
    head = MatchRecords.of(record)
    return [head.line(decision) for decision in decisions(record, seats, start, kept)]


@pytest.mark.parametrize(("game", "version", "variant"), SETUPS,
                         ids=[f"{g}-{v}-{s['num_players']}p" for g, v, s in SETUPS])
def test_kept_decisions_are_the_records_the_match_played_again_gives(game, version, variant):
    seats = [bot_seat(f"bot-{n}") for n in range(variant["num_players"])]
    for seed in (1, 2):
        record, kept = play_keeping(game, seed, seats, f"m-{seed}", options=variant["options"],
                                    version=version)
        assert kept is not None and kept.startswith(KEPT_MAGIC)
        assert unpack_kept(kept, record) is not None
        assert lines(record, kept) == lines(record, None)


def test_the_decisions_of_bots_sent_the_new_log_entries_only_are_kept_whole():
    """The export's records are whole observations, whatever the bot was sent."""
    seats = [bot_seat("a"), bot_seat("b"), bot_seat("c")]
    record, kept = play_keeping("aladino", 4, seats, "m-log-new", choose=keeping_the_log)
    assert kept is not None and lines(record, kept) == lines(record, None)


def test_a_mask_and_a_start_step_read_the_same_decisions_from_kept_ones():
    record, kept = play_keeping("caravans", 3, [bot_seat("a"), bot_seat("b"), bot_seat("c")],
                                "m-mask")
    for seats, start in ((seat_mask([0, 2]), 9), (seat_mask([1]), 0),
                         (seat_mask([0]), len(record["steps"]))):
        assert lines(record, kept, seats, start) == lines(record, None, seats, start)


def test_substituted_moves_and_a_forfeit_are_kept_as_sent():
    """Rulebook-independent: the failure policy's records (design.md section 4)."""
    substituted, kept = play_keeping("aldabas", 5, [bot_seat("a"), bot_seat("b")], "m-random",
                                     policy=FailurePolicy.uniform("random"),
                                     choose=malformed_at({4}))
    assert lines(substituted, kept) == lines(substituted, None)
    forfeited, kept = play_keeping("aladino", 6, [bot_seat("a"), bot_seat("b")], "m-forfeit",
                                   choose=silent_at(7))
    assert forfeited["forfeit"] is not None
    assert lines(forfeited, kept) == lines(forfeited, None)


def test_a_resumed_match_keeps_nothing():
    """A driver that took the match over after its first steps did not send them: it has no
    whole set to store, and the export plays that match again."""
    record, _ = play_keeping("aladino", 4, [bot_seat("a"), bot_seat("b")], "m-resumed")
    match = MatchPlay.start("aladino", record["seed"], record["options"],
                            [{k: v for k, v in seat.items() if k != "seat"}
                             for seat in record["seats"]], FailurePolicy(), "m-resumed",
                            keep_decisions=True)
    match.resume(record["steps"][:3], match.state, 0)
    match.record["steps"] = list(record["steps"])
    for step in record["steps"][3:]:
        match.payload(step["seat"], 1000)
        match.record["steps"].append(step)
    assert match.kept_decisions() is None


def test_a_match_keeps_its_decisions_only_when_asked():
    """Workers keep them only under REFEREE_KEEP_DECISIONS_S (their Redis memory)."""
    seats = [bot_seat("a"), bot_seat("b")]
    match = MatchPlay.start("caravans", 2, {}, seats, FailurePolicy(), "m-not-kept")
    while (seat := match.to_move) is not None:
        legal = match.payload(seat, 1000)["legal_actions"]
        match.advance(seat, random_move(random.Random(match.step), match.step, legal), legal)
    match.finish(None)
    assert match.kept is None and match.kept_decisions() is None


def test_kept_decisions_that_do_not_fit_are_not_read():
    seats = [bot_seat("a"), bot_seat("b")]
    record, kept = play_keeping("aladino", 8, seats, "m-8")
    other, other_kept = play_keeping("aladino", 9, seats, "m-8")  # same id, other moves
    assert kept is not None and other_kept is not None
    truncated = kept[:len(kept) // 2]
    claiming = zstandard.ZstdCompressor().compressobj(size=1 << 30)  # says 1 GiB follows
    claims_a_gigabyte = KEPT_MAGIC + claiming.compress(b"\0" * 1024) + claiming.flush(
        zstandard.COMPRESSOBJ_FLUSH_BLOCK)
    assert zstandard.frame_content_size(claims_a_gigabyte[len(KEPT_MAGIC):]) == 1 << 30
    no_size = KEPT_MAGIC + zstandard.ZstdCompressor(write_content_size=False).compress(b"x")
    for stored in (other_kept, truncated, b"RK1" + b"\0" * 40, b"not kept at all", b"",
                   claims_a_gigabyte, no_size):
        assert unpack_kept(stored, record) is None
        assert lines(record, stored) == lines(record, None)
    changed = {**record, "steps": [dict(step) for step in record["steps"]]}
    at = next(index for index, (mine, theirs)
              in enumerate(zip(record["steps"], other["steps"], strict=False))
              if mine["action"] != theirs["action"])
    changed["steps"][at]["action"] = other["steps"][at]["action"]
    assert unpack_kept(kept, changed) is None
