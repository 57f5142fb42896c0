"""Matches that share a deal, and when their seed may be shown.

A tournament plays one deal (one match seed) in several matches: the seat rotations of a
round-robin or gauntlet combination, the two matches of an SPRT pair or a Swiss pairing,
every bot's solo match of a round. A finished match's seed (and its replay, from which the
seed and every hidden card follow) would tell the deck and the hidden cards of a sibling
still being played, so both stay hidden from everyone but the admin until every match on
the deal is over. Each match records the ids of its siblings (`deal_siblings`) when it is
created, so the check needs only their statuses.
"""

from __future__ import annotations

from collections.abc import Iterable

from tournament.store import MatchMeta, MatchStatus, Store

OVER = (MatchStatus.FINISHED.value, MatchStatus.FAILED.value)


def tag_siblings(metas: list[MatchMeta]) -> None:
    """Give each match of `metas` the ids of the other matches with its seed."""
    by_seed: dict[int, list[str]] = {}
    for meta in metas:
        by_seed.setdefault(meta["seed"], []).append(meta["id"])
    for meta in metas:
        meta["deal_siblings"] = [other for other in by_seed[meta["seed"]] if other != meta["id"]]


def secret_deals(store: Store, matches: Iterable[dict]) -> set[str]:
    """The ids of the matches whose seed must stay hidden: not over, or sharing their deal
    with a match that is not over. One round trip for all the siblings."""
    matches = list(matches)
    running = _not_over(store, {sibling for match in matches if match["status"] in OVER
                                for sibling in match.get("deal_siblings", ())})
    return {match["id"] for match in matches
            if match["status"] not in OVER or running.intersection(match.get("deal_siblings", ()))}


def deal_is_secret(store: Store, match: dict) -> bool:
    return match["id"] in secret_deals(store, [match])


def deal_in_play(store: Store, match: dict) -> bool:
    """Whether another match on the match's deal is not over: what is seen of this match
    (even its public state) would tell what is hidden in that one."""
    return bool(_not_over(store, set(match.get("deal_siblings", ()))))


def _not_over(store: Store, match_ids: set[str]) -> set[str]:
    """Those of `match_ids` that exist and are not over, in one round trip."""
    return {match_id for match_id, status in store.match_statuses(sorted(match_ids)).items()
            if status is not None and status not in OVER}
