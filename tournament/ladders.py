"""Ladders: bots entered once play on, `concurrency` matches at a time, for as long as the
ladder runs, with a Weng-Lin skill per entry (`tournament.skill`) and opponents chosen by
`tournament.matchmaking` (docs/ratings.md).

- **Entries.** Entering queues an entry check (`tournament.entry_checks`, run by the
  workers); it makes the entry `active` (or `rejected`, with the reasons). A new version of
  an entered bot is checked the same way while the old version keeps playing; once it
  passes, the entry plays the new version, keeping its mu, its sigma widened to at least
  `NEW_VERSION_SIGMA`. An entry whose bot faulted in `HEALTH_FAULTS` of its last
  `HEALTH_WINDOW` matches is `suspended` (a push bot is told: `notice`); entering again
  runs the check again. Leaving keeps the entry and its history (`left`).
- **Matches** are ordinary bot matches tagged with the ladder's id and number. Each is
  counted once into the ladder (`count`, in one transaction with the matches that refill
  the ladder), right after it is counted into its game's ratings; `tend`, run by every
  worker every `TEND_EVERY_S`, counts what a dead worker left uncounted and refills.
- **Exactly once.** A ladder's entries and state change only in a WATCH/MULTI transaction
  on both (`Store.ladder_transaction`), with the matches it schedules, so any number of
  workers may count and tend at once.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any, cast

import engines
from referee.errors import RefereeError
from referee.match.botclient import PROTOCOL
from referee.match.replay import utc_now
from referee.match.setups import match_options
from tournament import matchmaking, pairing, scheduling, skill, wakeups
from tournament.formats import SetupError
from tournament.store import MatchMeta, Store, bot_seats, new_match_meta
from tournament.store.ladders import LadderTransaction

DEFAULT_CONCURRENCY = 4
HEALTH_WINDOW = 10  # an entry's last matches looked at for faults
HEALTH_FAULTS = 3  # matches with a fault of its bot among them that suspend it
NEW_VERSION_SIGMA = skill.SIGMA / 2
TEND_EVERY_S = 1.0

CHECKING, ACTIVE, REJECTED, SUSPENDED, LEFT = ("checking", "active", "rejected",
                                               "suspended", "left")
PLAYING = (ACTIVE,)  # statuses whose entries are matched
ENTERED = (CHECKING, ACTIVE)  # statuses a new version is checked in


class NotEntered(RefereeError, LookupError):
    """No entry of that bot in that ladder."""


# ----- creation and settings ---------------------------------------------------------------
def create_ladder(store: Store, spec: dict[str, Any], bot_cap: int) -> dict:
    """Store a ladder (`spec`: name, game, players, options, time_control, deadline_ms,
    policy, concurrency, seed) and answer its settings; `bot_cap`: the concurrent matches
    a bot may play (REFEREE_BOT_MAX_MATCHES), which matchmaking keeps under."""
    engine = engines.get(spec["game"])
    if spec["players"] < 2:
        raise SetupError("players", "a ladder's matches have at least 2 players", in_spec=True)
    try:
        options = match_options(engine, spec["players"], spec["options"])
    except engines.InvalidSetup as error:
        raise SetupError("options" if spec["options"] else "players", error.reason) from None
    ladder_id = f"l-{secrets.token_hex(8)}"
    meta = {"id": ladder_id, "name": spec.get("name") or ladder_id, "game": engine.name,
            "game_version": engine.version, "players": spec["players"], "options": options,
            "time_control": spec.get("time_control"), "deadline_ms": spec["deadline_ms"],
            "policy": spec["policy"], "concurrency": spec["concurrency"], "paused": False,
            "seed": spec["seed"], "bot_cap": bot_cap, "created_at": utc_now()}
    store.save_ladder(meta)
    return meta


def change_settings(store: Store, ladder_id: str, changes: dict[str, Any]) -> dict | None:
    """Pause or resume the ladder, change its concurrency; its new settings (None: no such
    ladder). Resuming or raising the concurrency schedules at once."""
    meta = store.update_ladder(ladder_id, lambda meta: {**meta, **changes})
    if meta is not None:
        refill(store, ladder_id)
    return meta


# ----- entries -----------------------------------------------------------------------------
def enter(store: Store, ladder_id: str, bot: dict) -> dict:
    """Enter the bot (again): its entry, `checking` its current version. An entry already
    checking or active at that version is answered as it is."""
    return cast(dict, _enter(store, ladder_id, bot, entered_only=False))  # never None so


def _enter(store: Store, ladder_id: str, bot: dict, entered_only: bool) -> dict | None:
    """`enter`; with `entered_only`, only an entry still checking or active, read in the
    same transaction (a bot's new version must not bring back an entry that left
    meanwhile), else None."""
    version = bot.get("version", 1)

    def step(txn: LadderTransaction) -> dict | None:
        old = txn.entry(bot["id"])
        if entered_only and (old is None or old["status"] not in ENTERED):
            return None
        if old is not None and old["status"] in ENTERED and version in (old["checking"],
                                                                        old["version"]):
            return old
        entry = {**(old or new_entry(bot)), "name": bot["name"], "owner": bot.get("owner"),
                 "checking": version, "reasons": []}
        if entry["status"] != ACTIVE:
            entry["status"] = CHECKING
        pipe = txn.commit(None, {bot["id"]: entry})
        store.join_ladder(pipe, ladder_id, bot["id"])
        store.queue_check(pipe, {"ladder": ladder_id, "bot": bot["id"], "version": version})
        store.announce_ladder(pipe, ladder_id, f"entry {bot['id']}")
        return entry

    return store.ladder_transaction(ladder_id, step)


def new_entry(bot: dict) -> dict:
    return {"bot": bot["id"], "name": bot["name"], "owner": bot.get("owner"), "version": None,
            "checking": None, "mu": skill.MU, "sigma": skill.SIGMA, "matches": 0,
            "version_matches": 0, "status": CHECKING, "reasons": [], "recent": [],
            "last_match_at": None, "entered_at": utc_now()}


def leave(store: Store, ladder_id: str, bot_id: str, reason: str = "left the ladder") -> dict:
    """The entry, `left` (its matches under way finish and count; it plays no more)."""
    return _change_entry(store, ladder_id, bot_id, lambda entry: {
        **entry, "status": LEFT, "checking": None, "reasons": [reason]})


def new_version(store: Store, bot: dict) -> None:
    """Check the bot's new version in every ladder it plays or waits to play in."""
    for ladder_id in store.ladders_of_bot(bot["id"]):
        _enter(store, ladder_id, bot, entered_only=True)


def retired(store: Store, bot_id: str) -> None:
    """A retired bot leaves every ladder it is in."""
    for ladder_id in store.ladders_of_bot(bot_id):
        entry = store.ladder_entry(ladder_id, bot_id)
        if entry is not None and entry["status"] != LEFT:
            leave(store, ladder_id, bot_id, "the bot was retired")


def checked(store: Store, ladder_id: str, bot_id: str, version: int,
            reasons: list[str]) -> dict | None:
    """The outcome of the entry check of `version` (`reasons` empty: it passed): the entry
    (None when the check was overtaken: a newer version, the entry left)."""

    def step(txn: LadderTransaction) -> dict | None:
        entry = txn.entry(bot_id)
        if entry is None or entry.get("checking") != version:
            return None
        entry = {**entry, "checking": None}
        if not reasons:
            if entry["version"] != version:
                entry.update(version=version, version_matches=0,
                             sigma=max(entry["sigma"], NEW_VERSION_SIGMA)
                             if entry["version"] is not None else entry["sigma"])
            entry.update(status=ACTIVE, reasons=[], recent=[])
        elif entry["status"] == ACTIVE:  # the old version plays on
            entry["reasons"] = [f"version {version} failed its entry check: {reason}"
                                for reason in reasons]
        else:
            entry.update(status=REJECTED, reasons=reasons)
        pipe = txn.commit(None, {bot_id: entry})
        store.announce_ladder(pipe, ladder_id, f"entry {bot_id}")
        if entry["status"] == REJECTED:
            store.queue_notice(pipe, _notice(ladder_id, entry))
        return entry

    entry = store.ladder_transaction(ladder_id, step)
    refill(store, ladder_id)
    return entry


def _change_entry(store: Store, ladder_id: str, bot_id: str,
                  change: Callable[[dict], dict]) -> dict:
    def step(txn: LadderTransaction) -> dict:
        entry = txn.entry(bot_id)
        if entry is None:
            raise NotEntered(bot_id)
        entry = change(entry)
        pipe = txn.commit(None, {bot_id: entry})
        store.announce_ladder(pipe, ladder_id, f"entry {bot_id}")
        return entry

    return store.ladder_transaction(ladder_id, step)


def _notice(ladder_id: str, entry: dict) -> dict:
    """What a push bot is told when its entry is rejected or suspended."""
    return {"protocol": PROTOCOL, "type": "notice", "ladder_id": ladder_id,
            "bot_id": entry["bot"], "status": entry["status"], "reasons": entry["reasons"]}


# ----- counting ----------------------------------------------------------------------------
def count(store: Store, match: dict, result: dict | None) -> bool:
    """Count a ladder match that is over into its ladder, once (`result`: its outcome as
    `tournament.results.match_outcome` reads it; None when it failed), and refill the
    ladder in the same transaction; True if this call counted it."""
    ladder_id = match["ladder_id"]

    def step(txn: LadderTransaction) -> bool:
        meta = txn.meta()
        if meta is None or txn.is_counted(match["id"]):
            return False
        state, entries = txn.state(), txn.entries()
        state["running"].pop(match["id"], None)
        changed: dict[str, dict] = {}
        points: list[list] = []
        if result is not None:
            state["counted"] = state.get("counted", 0) + 1
            changed, points = _rate(entries, match, result, state["counted"])
        suspended = [entry for bot, entry in changed.items()
                     if entry["status"] == SUSPENDED != entries[bot]["status"]]
        entries.update(changed)
        planned = _plan(meta, state, entries, store)
        pipe = txn.commit(state, changed)
        store.mark_ladder_counted(pipe, ladder_id, match["id"], points)
        for entry in suspended:
            store.queue_notice(pipe, _notice(ladder_id, entry))
        _queue(store, pipe, meta, planned)
        store.announce_ladder(pipe, ladder_id, f"match {match['id']}")
        store.announce_ladder(pipe, ladder_id, "standings")
        return True

    return store.ladder_transaction(ladder_id, step)


def _rate(entries: dict[str, dict], match: dict, result: dict,
          number: int) -> tuple[dict[str, dict], list[list]]:
    """The changed entries of the match's bots (skill, counts, health) and the history
    points `[number, bot, ordinal]` of the match (the ladder's `number`-th counted)."""
    seats = result["seats"]
    before = {bot: skill.Skill(entries[bot]["mu"], entries[bot]["sigma"])
              for bot in seats if bot in entries}
    after = skill.rate(before, seats, result["ranks"])
    versions = {seat["bot_id"]: seat.get("version") for seat in match["seats"]}
    changed: dict[str, dict] = {}
    points = []
    now = utc_now()
    for index, bot in enumerate(seats):
        if bot not in entries:
            continue
        entry = {**entries[bot]}
        entry.update(mu=after[bot].mu, sigma=after[bot].sigma, matches=entry["matches"] + 1,
                     last_match_at=now)
        if versions.get(bot) == entry["version"]:
            entry["version_matches"] += 1
        faulted = result["faults"][index] > 0 or result["forfeits"][index]
        entry["recent"] = [*entry["recent"], int(faulted)][-HEALTH_WINDOW:]
        if entry["status"] == ACTIVE and sum(entry["recent"]) >= HEALTH_FAULTS:
            entry.update(status=SUSPENDED, checking=None, reasons=[
                f"its bot faulted in {sum(entry['recent'])} of its last "
                f"{len(entry['recent'])} matches (the limit: {HEALTH_FAULTS} of "
                f"{HEALTH_WINDOW}); the last: match {match['id']}"])
        changed[bot] = entry
        points.append([number, bot, round(after[bot].ordinal, skill.DECIMALS)])
    return changed, points


# ----- scheduling --------------------------------------------------------------------------
def refill(store: Store, ladder_id: str) -> int:
    """Schedule what the ladder lacks of its concurrency now; how many matches."""

    def step(txn: LadderTransaction) -> int:
        meta, state = txn.meta(), txn.state()
        if meta is None or not _wants_matches(meta, state):
            return 0  # the usual case of the workers' tending: nothing more is read
        planned = _plan(meta, state, txn.entries(), store)
        if not planned:
            return 0
        pipe = txn.commit(state, {})
        _queue(store, pipe, meta, planned)
        return len(planned)

    return store.ladder_transaction(ladder_id, step)


def _plan(meta: dict, state: dict, entries: dict[str, dict], store: Store) -> list[MatchMeta]:
    """The matches to schedule now, recorded in `state` (their bots as running), between
    active entries not playing in the ladder, below their bot's cap of matches at once,
    of an owner not suspended."""
    if not _wants_matches(meta, state):
        return []
    busy = {bot for bots in state["running"].values() for bot in bots}
    free = [bot for bot, entry in entries.items() if entry["status"] in PLAYING
            and bot not in busy]
    held = store.bots_playing(free)
    barred = store.suspended_accounts(sorted({entries[bot]["owner"] for bot in free
                                              if entries[bot]["owner"]}))
    free = [bot for bot in free if held.get(bot, 0) < meta["bot_cap"]
            and entries[bot]["owner"] not in barred]
    candidates = [matchmaking.Candidate(bot, entries[bot]["owner"], entries[bot]["mu"],
                                        entries[bot]["sigma"], entries[bot]["matches"],
                                        entries[bot]["version_matches"]) for bot in free]
    planned = []
    while len(state["running"]) < meta["concurrency"]:
        candidates = [entry for entry in candidates if entry.bot not in busy]
        number = state["scheduled"]
        bots = matchmaking.next_match(candidates, meta["players"], meta["seed"], number)
        if bots is None:
            break
        match = _match_meta(meta, number, [entries[bot] for bot in bots])
        state["scheduled"] += 1
        state["running"][match["id"]] = bots
        busy.update(bots)
        planned.append(match)
    return planned


def _wants_matches(meta: dict, state: dict) -> bool:
    return not meta["paused"] and len(state["running"]) < meta["concurrency"]


def _match_meta(meta: dict, number: int, seated: list[dict]) -> MatchMeta:
    """Ladder match `number` between these entries, each at its active version."""
    seats = bot_seats([(entry["bot"], entry["name"]) for entry in seated])
    for seat, entry in zip(seats, seated, strict=True):
        seat["version"] = entry["version"]
    return new_match_meta(
        meta["game"], meta["game_version"], seats, meta["options"],
        pairing.derive_seed(meta["seed"], number), meta["policy"], meta["deadline_ms"],
        meta["deadline_ms"], ladder_id=meta["id"], ladder_index=number,
        **scheduling.clock_tag(meta))


def _queue(store: Store, pipe: Any, meta: dict, planned: list[MatchMeta]) -> None:
    """Store and queue the planned matches on `pipe` (in MULTI)."""
    engine = engines.get(meta["game"], meta["game_version"])
    for match in planned:
        state = engine.new_game(num_players=match["num_players"], seed=match["seed"],
                                options=meta["options"])
        store.create_match(match, state, engine.current_seat(state), {}, pipe)
        wakeups.enqueue_match(store, match, pipeline=pipe)
        store.record_ladder_match(pipe, meta["id"], match["id"])


# ----- reading -----------------------------------------------------------------------------
def ladder_view(store: Store, ladder_id: str) -> dict | None:
    """The settings, the standings, and how many matches are scheduled, running, counted."""
    meta = store.ladder_meta(ladder_id)
    if meta is None:
        return None
    state, entries = store.ladder_state(ladder_id), store.ladder_entries(ladder_id)
    return {**meta, "standings": standings(entries), "scheduled": state["scheduled"],
            "running": len(state["running"]), "counted": state.get("counted", 0)}


def standings(entries: dict[str, dict]) -> list[dict]:
    """The entries that have a version in play (or had), best ordinal first."""
    rows = [standing(entry) for entry in entries.values() if entry["version"] is not None]
    return sorted(rows, key=lambda row: (-row["ordinal"], row["bot"]))


def standing(entry: dict) -> dict:
    return {"bot": entry["bot"], "name": entry["name"], "version": entry["version"],
            **skill.Skill(entry["mu"], entry["sigma"]).shown(), "matches": entry["matches"],
            "status": entry["status"], "last_match_at": entry["last_match_at"]}


def entry_view(entry: dict) -> dict:
    """An entry as `GET /ladders/{id}/entries` lists it."""
    return {**standing(entry), "owner": entry["owner"], "checking": entry["checking"],
            "reasons": entry["reasons"], "version_matches": entry["version_matches"],
            "entered_at": entry["entered_at"]}
