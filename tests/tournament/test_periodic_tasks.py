"""A worker's periodic tasks (leases, the recovery sweep, timers, heartbeats, ladders): a
round that fails is logged and the next rounds run; a round stuck on something is logged
while it lasts, so a sweep that never comes back shows in the worker's log."""

from __future__ import annotations

import asyncio
import logging

from tournament import worker


def test_a_stalled_round_and_a_failed_one_are_logged_and_the_rounds_go_on(caplog,
                                                                         monkeypatch):
    monkeypatch.setattr(worker, "STALLED_S", 0.05)
    rounds: list[int] = []

    async def sweep() -> None:
        rounds.append(len(rounds))
        if len(rounds) == 1:
            await asyncio.sleep(0.2)  # stuck for four times STALLED_S
        elif len(rounds) == 2:
            raise RuntimeError("this round fails")

    async def three_rounds() -> None:
        every = asyncio.ensure_future(worker._every(0.01, sweep))
        while len(rounds) < 3:
            await asyncio.sleep(0.01)
        every.cancel()

    with caplog.at_level(logging.WARNING, logger=worker.__name__):
        asyncio.run(asyncio.wait_for(three_rounds(), 30))
    assert "periodic task sweep still running after 0.05 s" in caplog.text
    assert "periodic task sweep failed" in caplog.text and "this round fails" in caplog.text
    assert rounds[:3] == [0, 1, 2]
