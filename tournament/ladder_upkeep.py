"""What the workers do for the ladders besides playing their matches (`tournament.worker`
runs `upkeep` every `ladders.TEND_EVERY_S` on its event loop):

- **Entry checks.** Each queued check (`{"ladder", "bot", "version"}`) is claimed by one
  worker and run there: the bot, at that version's URL, answers decisions from every phase
  of the game (`referee.match.bot_check`, as `referee check-bot` does), then plays
  `SELF_PLAY_MATCHES` matches of the ladder's setup against itself, in the worker, stored
  nowhere (not listed, not rated), in which it must not fault. The outcome makes the entry
  `active` or `rejected` with the reasons (`tournament.ladders.checked`); a check that
  takes longer than `CHECK_BUDGET_S` in all is a rejection (a bot that answers just under
  its deadline would otherwise hold the worker's checks for minutes). A check whose
  worker died is queued again after `CHECK_STALE_S`.
- **Notices.** An entry rejected or suspended is told to its push bot: a POST of
  `{"protocol": "referee/1", "type": "notice", "ladder_id", "bot_id", "status",
  "reasons"}`, its answer ignored.
- **Tending.** Every ladder's running matches that are over but not counted (their worker
  died in between) are counted, and every ladder is refilled to its concurrency.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import engines
from referee.config import Config
from referee.match import bot_check
from referee.match.botclient import NOTICE_DEADLINE_MS, BotClient
from referee.match.clock import TimeControl
from referee.match.runner import FailurePolicy, MatchPlay, PushSeat, play
from tournament import ladders, pairing, results
from tournament.bots import version_url
from tournament.store import MatchStatus, Store

log = logging.getLogger(__name__)
InThread = Callable[..., Awaitable[Any]]  # runs a blocking call off the event loop

SELF_PLAY_MATCHES = 2
CHECK_DECISIONS_PER_PHASE = 1
CHECK_BUDGET_S = 120  # a check's whole time: a bot slow on purpose holds no queue for long
CHECK_STALE_S = 300
MAX_REASONS = 5
NOTICES_PER_ROUND = 50


async def run_checks(store: Store, config: Config, in_thread: InThread) -> int:
    """Run the entry checks queued now, one after the other; how many."""
    done = 0
    while (check := await in_thread(store.take_check)) is not None:
        try:
            reasons = await asyncio.wait_for(entry_check(store, config, check, in_thread),
                                             CHECK_BUDGET_S)
        except TimeoutError:
            reasons = [f"the entry check took longer than {CHECK_BUDGET_S} s in all: the bot "
                       "answers too slowly to be checked"]
        except asyncio.CancelledError:  # the worker stops: another one runs it
            store.return_check(check)
            raise
        except Exception as error:
            log.exception("entry check %s failed", check)
            reasons = [f"the entry check could not be run: {error}"]
        await in_thread(ladders.checked, store, check["ladder"], check["bot"],
                        check["version"], reasons)
        await in_thread(store.check_done, check)
        done += 1
    return done


async def entry_check(store: Store, config: Config, check: dict, in_thread: InThread) -> list[str]:
    """The reasons to refuse the bot's version into the ladder (none: it passed)."""
    meta, bot = await in_thread(lambda: (store.ladder_meta(check["ladder"]),
                                         store.get_bot(check["bot"])))
    if meta is None or bot is None or bot.get("retired_at"):
        return ["the bot or the ladder is gone"]
    url = version_url(bot, check["version"])
    game = engines.get(meta["game"], meta["game_version"])
    decisions = await in_thread(bot_check.sample_decisions, game, meta["seed"] % 1000, 1,
                                CHECK_DECISIONS_PER_PHASE)
    client = BotClient(url, meta["deadline_ms"], bot.get("secret", ""), config.bot_hosts)
    findings, _ = await bot_check.check(game, client, decisions)
    if findings:
        return [_finding_reason(finding) for finding in findings[:MAX_REASONS]]
    reasons = []
    for number in range(SELF_PLAY_MATCHES):
        reasons += await _self_play(meta, bot, url, number, config)
    return reasons[:MAX_REASONS]


def _finding_reason(finding: bot_check.Finding) -> str:
    decision = finding.decision
    return (f"{finding.fault} answer to a decision of phase {'/'.join(decision.phase)} "
            f"({decision.setup}, step {decision.step}): {finding.detail}")


async def _self_play(meta: dict, bot: dict, url: str, number: int,
                     config: Config) -> list[str]:
    """Play one match of the ladder's setup with the bot in every seat; its faults."""
    seats = [PushSeat(url, meta["deadline_ms"], bot_id=bot["id"], name=bot["name"],
                      secret=bot.get("secret", ""), allowlist=config.bot_hosts)
             for _ in range(meta["players"])]
    match = MatchPlay.start(
        meta["game"], pairing.derive_seed(meta["seed"], -1 - number),
        meta["options"], [seat.info() for seat in seats],
        FailurePolicy.from_dict(meta["policy"]), f"check-{meta['id']}-{bot['id']}-{number}",
        version=meta["game_version"], time_control=TimeControl.from_dict(meta["time_control"]))
    try:
        await play(match, seats)
    finally:
        await asyncio.gather(*(seat.aclose() for seat in seats))
    return [f"self-play match {number + 1}: {step['fault']['code']} at step {step['step']} "
            f"(seat {step['seat']}): {step['fault']['detail']}"
            for step in match.record["steps"] if step["fault"]]


async def send_notices(store: Store, config: Config, in_thread: InThread) -> int:
    """POST the notices queued now to their push bots (answers and failures ignored)."""
    notices = await in_thread(store.take_notices, NOTICES_PER_ROUND)
    for notice in notices:
        bot = await in_thread(store.get_bot, notice["bot_id"])
        if bot is None or not bot.get("url"):
            continue
        client = BotClient(bot["url"], NOTICE_DEADLINE_MS, bot.get("secret", ""),
                           config.bot_hosts)
        try:
            await client.notify(notice)
        finally:
            await client.aclose()
    return len(notices)


def tend(store: Store) -> None:
    """Count every ladder's matches over but not counted, queue again the checks of dead
    workers, and refill every ladder."""
    store.requeue_stale_checks(CHECK_STALE_S)
    for ladder_id in store.ladder_ids():
        running = list(store.ladder_state(ladder_id)["running"])
        for match_id, status in store.match_statuses(running).items():
            if status in (MatchStatus.FINISHED, MatchStatus.FAILED):
                match = store.get_match(match_id)
                if match is not None:
                    results.count_outcome(store, match)
        ladders.refill(store, ladder_id)
