"""The match job: the function rq runs for every wake-up of a match (`tournament.wakeups`
queues it, by this dotted name: `tournament.jobs.play_match`), driving the stored match
forward (`tournament.driver`).
"""

from __future__ import annotations

import asyncio
from typing import Any

import rq

from referee.config import Config
from tournament import driver
from tournament.store import Progress, Store
from tournament.store.connection import connect_async


def play_match(payload: dict[str, Any]) -> dict[str, Any]:
    """The job's function for any rq worker: drive the match in a private event loop.
    `referee worker` does not call it; it drives many matches on one loop instead
    (`tournament.worker`)."""
    job = rq.get_current_job()
    config = Config.from_env()
    if job is None:
        raise RuntimeError("play_match runs as an rq job (rq.get_current_job() is None)")

    async def run() -> dict[str, Any]:
        client = connect_async(config.redis_url)
        try:
            context = driver.Context(Progress(client), Store(job.connection), config,
                                     config.sealer(), name=job.worker_name or "rq")
            return await driver.drive(context, payload["match_id"])
        finally:
            await client.aclose()

    return asyncio.run(run())
