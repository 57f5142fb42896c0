"""Tournament formats: what each one schedules, how it goes on as matches finish, and what
its view adds.

- `round_robin`: every combination of `players` bots in every seat rotation, `rounds` times
  (`tournament.pairing.schedule`), all queued at once.
- `gauntlet`: the same over the combinations that hold the challenger
  (`tournament.pairing.gauntlet`), all queued at once.
- `sprt`: pairs of matches on one deal, the seats swapped (solo: both bots on the deal),
  queued a few at a time (`concurrency` matches in flight at most); after each finished pair
  the pentanomial and the LLR (`tournament.sprt`) are updated, and scheduling stops once the
  LLR leaves its bounds or `max_matches` are scheduled. Matches in flight then finish and
  still count.
- `swiss`: one round at a time (`tournament.swiss`), each pairing played in both seat
  orders; the next round is paired once every match of the current one is over.

`advance` is the one hook of the counting (`tournament.results.finish_tournament_of`, after
every counted match, and the tournament's sweep): SPRT and Swiss progress lives in one JSON
value per tournament (`Store.format_state`), changed only in a WATCH/MULTI transaction on
that key together with the matches it schedules (`Store.advance_format`). So a pair is
counted and a pair or round is scheduled exactly once, however many workers call `advance`
at the same moment, and whatever call comes after a worker died picks up what it left.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

from referee.errors import RefereeError
from tournament import pairing, ratings, scheduling, sprt, swiss
from tournament.store import Store
from tournament.store.tournaments import FormatTransaction

ROUND_ROBIN, SPRT, GAUNTLET, SWISS = "round_robin", "sprt", "gauntlet", "swiss"
FORMATS = (ROUND_ROBIN, SPRT, GAUNTLET, SWISS)
PROGRESSIVE = (SPRT, SWISS)  # formats whose matches are scheduled as others finish
MAX_MATCHES = 5000


class SetupError(RefereeError, ValueError):
    """A tournament that cannot be started, naming the request field at fault. `in_spec`:
    the refusal follows from what `openapi.yaml` says of the field alone (a 400); else it
    depends on other fields or on stored data, which no schema can say (a 422)."""

    def __init__(self, field: str, reason: str, in_spec: bool = False):
        super().__init__(reason)
        self.field = field
        self.reason = reason
        self.in_spec = in_spec


FORMAT_FIELDS = {  # the request fields each format takes besides the common ones
    ROUND_ROBIN: {"rounds"},
    GAUNTLET: {"rounds", "challenger"},
    SWISS: {"rounds"},
    SPRT: {"elo0", "elo1", "alpha", "beta", "max_matches", "concurrency"},
}
FORMAT_DEFAULTS = {"rounds": 1, "elo0": 0.0, "elo1": 5.0, "alpha": 0.05, "beta": 0.05,
                   "max_matches": 1000, "concurrency": 16}


def check_fields(spec: dict) -> None:
    """The fields of the request belong to its format (refused by name otherwise), a
    gauntlet names its challenger, an SPRT's Elo bounds are in order."""
    kind = spec.get("format", ROUND_ROBIN)
    foreign = set().union(*FORMAT_FIELDS.values()) - FORMAT_FIELDS[kind]
    for name in sorted(foreign & set(spec)):
        raise SetupError(name, f"not a field of the {kind} format")
    if kind == GAUNTLET and "challenger" not in spec:
        raise SetupError("challenger", "a gauntlet needs its challenger")
    if kind == SPRT and spec["elo0"] >= spec["elo1"]:
        raise SetupError("elo1", f"elo0 ({spec['elo0']}) must be below elo1 "
                                 f"({spec['elo1']})")


def format_of(meta: dict) -> str:
    return meta.get("format", ROUND_ROBIN)


def entrants(spec: dict) -> list[str]:
    """Every bot of the request, in order: a gauntlet's challenger first, then its field."""
    if spec.get("format") == GAUNTLET:
        if spec["challenger"] in spec["bots"]:
            raise SetupError("challenger", "the challenger is not part of its own field")
        return [spec["challenger"], *spec["bots"]]
    return list(spec["bots"])


# ----- creation -----------------------------------------------------------------------
def format_fields(spec: dict, num_bots: int) -> dict:
    """The meta fields of the format: `rounds` and `total` (for SPRT: the most pairs and
    matches it may play) and the format's own settings."""
    kind = spec.get("format", ROUND_ROBIN)
    players, rounds = spec["players"], spec.get("rounds", 1)
    if kind == SPRT:
        pairs = spec["max_matches"] // 2
        settings = {key: spec[key] for key in ("elo0", "elo1", "alpha", "beta", "max_matches",
                                               "concurrency")}
        return {"rounds": pairs, "total": 2 * pairs, "sprt": settings}
    if kind == GAUNTLET:
        total = pairing.gauntlet_count(num_bots - 1, players, rounds)
        fields = {"challenger": spec["challenger"]}
    elif kind == SWISS:
        total = num_bots // 2 * 2 * rounds
        fields = {}
    else:
        total = pairing.match_count(num_bots, players, rounds)
        fields = {}
    if total > MAX_MATCHES:
        raise SetupError("rounds", f"the schedule has {total} matches; at most {MAX_MATCHES}")
    return {"rounds": rounds, "total": total, **fields}


def check_size(kind: str, num_bots: int, players: int) -> None:
    """Refuse a field too small for the format, naming the field at fault."""
    if kind == SPRT and num_bots != 2:
        raise SetupError("bots", "an SPRT needs exactly 2 bots: the challenger, then the "
                                 "baseline")
    if kind in (SPRT, SWISS) and players > 2:
        raise SetupError("players", f"{kind} matches have 2 players"
                                    + (" (or 1: solo)" if kind == SPRT else ""))
    if kind in (GAUNTLET, SWISS) and players < 2:
        raise SetupError("players", f"{kind} matches have at least 2 players")
    if kind == SWISS and num_bots < 2:
        raise SetupError("bots", "a Swiss tournament needs at least 2 bots")
    if kind == GAUNTLET and num_bots - 1 < players - 1:
        raise SetupError("bots", f"{players} players per match need a field of at least "
                                 f"{players - 1} bots besides the challenger")
    if kind == ROUND_ROBIN and num_bots < players:
        raise SetupError("bots", f"{players} players per match need at least {players} bots, "
                                 f"got {num_bots}")


def first_plan(meta: dict) -> tuple[list[dict], dict | None]:
    """The matches queued at creation and the format's initial bookkeeping (None for the
    fixed schedules)."""
    kind, bot_ids = format_of(meta), [bot["bot_id"] for bot in meta["bots"]]
    if kind == ROUND_ROBIN:
        return pairing.schedule(bot_ids, meta["players"], meta["rounds"], meta["seed"],
                                meta["deals"]), None
    if kind == GAUNTLET:
        return pairing.gauntlet(bot_ids[0], bot_ids[1:], meta["players"], meta["rounds"],
                                meta["seed"], meta["deals"]), None
    if kind == SPRT:
        state = {"pairs": 0, "counted": [], "void": 0, "pentanomial": [0] * 5, "history": [],
                 "decision": None, "decided_after": None}
        return _next_sprt_pairs(meta, state), state
    state = {"rounds": []}
    return _next_swiss_round(meta, state, []), state


# ----- advancing ----------------------------------------------------------------------
def advance(store: Store, tournament_id: str, match_id: str | None = None,
            meta: dict | None = None) -> None:
    """Count what finished and schedule what is due (see the module docstring); given a
    match, only its pair or round is looked at, else everything not counted yet. Safe to
    call any number of times, from any number of processes. `meta`: the tournament's, when
    the caller has just read it."""
    if meta is None:
        meta = store.tournament_meta(tournament_id)
    if meta is None or format_of(meta) not in PROGRESSIVE:
        return
    step = _advance_sprt if format_of(meta) == SPRT else _advance_swiss

    def apply(txn: FormatTransaction) -> None:
        state = txn.state()
        if state is not None:
            step(store, txn, meta, state, match_id)

    store.advance_format(tournament_id, format_of(meta), apply)


def _commit(store: Store, txn: FormatTransaction, meta: dict, state: dict,
            planned: list[dict], total: int | None = None) -> None:
    """Write the new bookkeeping with the matches it schedules (and the shrunk total of a
    decided SPRT), in one MULTI."""
    metas = scheduling.match_metas(meta, planned)
    pipe = txn.commit(state, None if total is None else {**meta, "total": total})
    scheduling.queue_matches(store, pipe, meta, metas)


# ----- SPRT ---------------------------------------------------------------------------
def hypotheses(meta: dict) -> sprt.Hypotheses:
    settings = meta["sprt"]
    return sprt.Hypotheses(settings["elo0"], settings["elo1"], settings["alpha"],
                           settings["beta"])


def pairs_in_flight(meta: dict) -> int:
    """Pairs scheduled and not over at most: `concurrency` matches, at least one pair."""
    return max(1, meta["sprt"]["concurrency"] // 2)


def _advance_sprt(store: Store, txn: FormatTransaction, meta: dict, state: dict,
                  match_id: str | None) -> None:
    counted = set(state["counted"])
    if match_id is not None:
        index = txn.tournament_index(match_id)
        candidates = [] if index is None else [index // 2]
    else:
        candidates = [pair for pair in range(state["pairs"]) if pair not in counted]
    finished = False
    for pair in candidates:
        if pair in counted or pair >= state["pairs"]:
            continue
        bucket = _pair_bucket(txn, meta, txn.match_ids(2 * pair, 2))
        if bucket is None:
            continue
        _count_pair(meta, state, pair, bucket)
        counted.add(pair)
        finished = True
    planned = _next_sprt_pairs(meta, state)
    if not finished and not planned:
        return
    decided = state["decision"] is not None
    _commit(store, txn, meta, state, planned, 2 * state["pairs"] if decided else None)


def _pair_bucket(txn: FormatTransaction, meta: dict, match_ids: list[str]) -> int | str | None:
    """The pair's pentanomial bucket, "void" when one of its matches failed, None while one
    is not over."""
    if len(match_ids) < 2:
        return None
    results, failed = txn.outcomes(match_ids)
    if any(failed) and all(r is not None or f for r, f in zip(results, failed, strict=True)):
        return "void"
    played = [result for result in results if result is not None]
    if len(played) < len(results):
        return None
    challenger = meta["bots"][0]["bot_id"]
    return sprt.pair_bucket(challenger_scores(played, challenger))


def challenger_scores(results: list[dict], challenger: str) -> list[float]:
    """The challenger's game scores in a pair: per 2-seat match from the ranks, for a solo
    pair one game from the two scores (higher wins)."""
    if all(len(result["seats"]) == 1 for result in results):
        mine = next(r for r in results if r["seats"][0] == challenger)
        other = next(r for r in results if r["seats"][0] != challenger)
        return [sprt.game_score(mine["scores"][0], other["scores"][0])]
    scores = []
    for result in results:
        seat = result["seats"].index(challenger)
        scores.append(ratings.pair_score(result["ranks"][seat], result["ranks"][1 - seat]))
    return scores


def _count_pair(meta: dict, state: dict, pair: int, bucket: int | str) -> None:
    state["counted"].append(pair)
    if bucket == "void":
        state["void"] += 1
        return
    state["pentanomial"][bucket] += 1
    llr = sprt.llr(state["pentanomial"], hypotheses(meta))
    finished = sum(state["pentanomial"])
    state["history"].append([finished, round(llr, ratings.DECIMALS), bucket])
    if state["decision"] is None:
        state["decision"] = hypotheses(meta).decision(llr)
        state["decided_after"] = finished if state["decision"] else None


def _next_sprt_pairs(meta: dict, state: dict) -> list[dict]:
    """Pairs to queue now (and counted in `state`): none once decided or at max_matches,
    else enough to have `pairs_in_flight` pairs scheduled and not over."""
    if state["decision"] is not None:
        return []
    in_flight = state["pairs"] - len(state["counted"])
    count = min(pairs_in_flight(meta) - in_flight, meta["rounds"] - state["pairs"])
    planned = []
    for pair in range(state["pairs"], state["pairs"] + max(count, 0)):
        planned += sprt_pair(meta, pair)
    state["pairs"] += max(count, 0)
    return planned


def sprt_pair(meta: dict, pair: int) -> list[dict]:
    """The two matches of pair `pair`: the challenger first then second on one deal (solo:
    each alone on it); independent deals give each match its own seed."""
    challenger, baseline = (bot["bot_id"] for bot in meta["bots"])
    solo = meta["players"] == 1
    seatings = [[challenger], [baseline]] if solo else [[challenger, baseline],
                                                         [baseline, challenger]]
    paired = meta["deals"] == pairing.PAIRED
    return [{"index": 2 * pair + turn, "seats": seats,
             "seed": pairing.derive_seed(meta["seed"], pair) if paired
             else pairing.derive_seed(meta["seed"], pair, turn)}
            for turn, seats in enumerate(seatings)]


def sprt_view(meta: dict, state: dict) -> dict:
    """The SPRT's numbers: LLR and bounds, decision, pentanomial, Elo with its 95% interval,
    the LLR after each finished pair, and the settings."""
    tested = hypotheses(meta)
    pentanomial = state["pentanomial"]
    pairs = sum(pentanomial)
    estimate = sprt.elo_estimate(pentanomial)
    return {
        **meta["sprt"], "llr": round(sprt.llr(pentanomial, tested), ratings.DECIMALS),
        "lower": round(tested.lower, ratings.DECIMALS),
        "upper": round(tested.upper, ratings.DECIMALS),
        "decision": state["decision"], "decided_after": state["decided_after"],
        "pentanomial": pentanomial, "pairs": pairs,
        "games": pairs if meta["players"] == 1 else 2 * pairs,
        "void_pairs": state["void"], "scheduled_pairs": state["pairs"],
        "elo": round(estimate.elo, 2), "elo_low": round(estimate.low, 2),
        "elo_high": round(estimate.high, 2), "history": state["history"],
    }


# ----- Swiss --------------------------------------------------------------------------
def _advance_swiss(store: Store, txn: FormatTransaction, meta: dict, state: dict,
                   match_id: str | None) -> None:
    if len(state["rounds"]) >= meta["rounds"]:
        return
    current = state["rounds"][-1]
    ids = txn.match_ids(current["first"], current["count"])
    results, failed = txn.outcomes(ids)
    if len(ids) < current["count"] or any(r is None and not f
                                          for r, f in zip(results, failed, strict=True)):
        return
    planned = _next_swiss_round(meta, state, txn.results())
    _commit(store, txn, meta, state, planned)


def swiss_tally(meta: dict, state: dict, results: list[dict]
                ) -> tuple[dict[str, Fraction], dict[str, list[str]], Counter[str]]:
    """Points (a match's pair score each, a bye `swiss.BYE_POINTS`), opponents met (one
    entry per pairing) and byes, from the counted results and the rounds paired."""
    bots = [bot["bot_id"] for bot in meta["bots"]]
    points = {bot: Fraction(0) for bot in bots}
    opponents: dict[str, list[str]] = {bot: [] for bot in bots}
    byes: Counter[str] = Counter()
    for result in results:
        for bot, other, score in ratings.pairwise(result):
            points[bot] += Fraction(score)
            points[other] += 1 - Fraction(score)
    for played in state["rounds"]:
        for a, b in played["pairings"]:
            opponents[a].append(b)
            opponents[b].append(a)
        if played["bye"] is not None:
            byes[played["bye"]] += 1
            points[played["bye"]] += swiss.BYE_POINTS
    return points, opponents, byes


def _next_swiss_round(meta: dict, state: dict, results: list[dict]) -> list[dict]:
    """Pair the next round from the standings so far, record it in `state` and return its
    matches: both seat orders of every pairing, on one deal (or two, independent deals)."""
    bots = [bot["bot_id"] for bot in meta["bots"]]
    points, opponents, byes = swiss_tally(meta, state, results)
    met = Counter(swiss.meeting(bot, other) for bot in bots for other in opponents[bot]
                  if bot < other)
    pairings, bye = swiss.pair_round(bots, points, met, byes)
    number = len(state["rounds"])
    first = sum(played["count"] for played in state["rounds"])
    planned: list[dict[str, Any]] = []
    for index, (a, b) in enumerate(pairings):
        for turn, seats in enumerate(([a, b], [b, a])):
            parts = (number, index) if meta["deals"] == pairing.PAIRED else (number, index, turn)
            planned.append({"index": first + len(planned), "seats": seats,
                            "seed": pairing.derive_seed(meta["seed"], *parts)})
    state["rounds"].append({"pairings": [list(p) for p in pairings], "bye": bye,
                            "first": first, "count": len(planned)})
    return planned


def swiss_view(meta: dict, state: dict, results: list[dict], match_ids: list[str],
               names: dict[str, str]) -> dict:
    """The rounds (pairings with their matches, the bye) and the standings with Buchholz."""
    bots = [bot["bot_id"] for bot in meta["bots"]]
    points, opponents, byes = swiss_tally(meta, state, results)
    rows = swiss.standings(bots, points, opponents, byes)
    rounds = [{"round": number + 1, "bye": played["bye"], "pairings": [
        {"bots": pair, "matches": match_ids[played["first"] + 2 * index:
                                            played["first"] + 2 * index + 2]}
        for index, pair in enumerate(played["pairings"])]}
        for number, played in enumerate(state["rounds"])]
    return {"rounds": rounds, "standings": [
        {"rank": place, "bot_id": row["bot"], "name": names.get(row["bot"], row["bot"]),
         **{key: value for key, value in row.items() if key != "bot"}}
        for place, row in enumerate(rows, 1)]}


def format_view(store: Store, meta: dict, results: list[dict], match_ids: list[str],
                names: dict[str, str]) -> dict[str, Any]:
    """What the format adds to the tournament view: `format`, `deals`, `challenger`,
    `sprt` and `swiss` (null where they do not apply)."""
    kind = format_of(meta)
    state = store.format_state(meta["id"], kind) if kind in PROGRESSIVE else None
    return {
        "format": kind, "deals": meta.get("deals", pairing.PAIRED),
        "challenger": meta["bots"][0]["bot_id"] if kind in (GAUNTLET, SPRT) else None,
        "sprt": sprt_view(meta, state) if kind == SPRT and state else None,
        "swiss": swiss_view(meta, state, results, match_ids, names)
        if kind == SWISS and state else None,
    }
