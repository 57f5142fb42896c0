"""Ladders (issue 28): what choosing a match costs with 10,000 entries, and how many matches
per bot a ladder of 100 bots of known strength needs before its standings are in order.
Goals: matchmaking <= 5 ms p99 per match at 10,000 entries; Kendall tau >= 0.9 within a
number of matches per bot that docs/ratings.md states.

    python3 bench/ladder.py [--entries 10000] [--calls 1000] [--bots 100]
                            [--matches-per-bot 200] [--seeds 3] [--parts 1,2] [--quick]
                            [--beta 25/3] [--tau 0] [--model plackett-luce]

Both parts run the ladder's own code in-process, without Redis or HTTP: a count takes the
oldest running match (instant bots finish in the order they were scheduled), rates it
with `tournament.ladders._rate` (`tournament.skill.rate`), and refills the ladder with
`tournament.ladders._plan`, which builds the candidates from the entries and calls
`tournament.matchmaking.next_match` until `concurrency` matches run; as
`tournament.ladders.count` does in its transaction.

Part 1, the cost at `--entries` entries (10,000 bots of 6,000 owners, drawn uniformly, so
most owners have one to three bots; 95% active, the rest checking, suspended or left; 1%
new, the rest with 1 + an exponential number of matches, mean 150, one in five on a newer
version with fewer matches of it; sigma shrinking with the matches of the version, mu
near a hidden skill), `concurrency` 64, three in ten bots also playing a match elsewhere
(the bot cap is 4):
- `next_match` alone, `--calls` calls (2 and 4 players): a chosen bot leaves the list and
  comes back rated, its counts up by one, when its match is counted (the oldest first);
  also on a fresh ladder of as many entries none of which has played (every one tied for
  the anchor; a quarter of the calls);
- the whole `_plan`, `--refills` refills of one match after a count each: all of it, the
  `next_match` call inside it, and the rest (the candidate list built from the entry
  dicts, the bot caps and suspended owners looked up, here in memory where the store asks
  Redis, the match's meta); with Python's collector running as it would (its pauses are in
  the figures), then with it off;
- what decoding the stored entries costs (orjson, as every count's transaction reads
  them; Redis itself is not measured).

Part 2, convergence: `--bots` bots (of 80% as many owners: 20 of 100 own two) with hidden
skills at the normal quantiles 25 + (25/3) z_((k + 1/2) / n), shuffled
over the bot ids by the seed, so they are spread like the prior. A match's ranking is
drawn from one of two generative models:
- Thurstone: each seat performs its skill plus Normal(0, (25/6)^2) noise (the ladder's
  beta; it stays so whatever `--beta` says), highest first;
- Plackett-Luce: the winner is drawn with probability proportional to exp(skill / 3.46),
  then the second among the rest, ... (3.46 = sqrt(2) 25/6 / 1.702: about the same pair
  probabilities as the Thurstone model).
After every `--bots` seats counted (one more match per bot on average), Kendall tau of
the standings (ordinal, mu - 3 sigma) against the hidden skills. Reported: the matches
per bot at which tau first reaches 0.9, from when on it stays >= 0.9 to the end of the
run, and the fewest and most matches any bot had then; `--seeds` seeds each, 2 and 4
players, the ladder's default concurrency.
"""

from __future__ import annotations

import argparse
import bisect
import functools
import gc
import math
import random
import statistics
import time
from collections import deque
from collections.abc import Callable, Sequence
from itertools import combinations
from operator import attrgetter
from typing import Any

import _support
import orjson
from openskill.models import BradleyTerryFull, PlackettLuce, ThurstoneMostellerFull

from tournament import ladders, matchmaking, skill

GOAL_MS = 5.0
GOAL_TAU = 0.9
BIG_CONCURRENCY = 64
NOISE = 25 / 6  # the Thurstone performance's spread around a skill
PLL_SCALE = math.sqrt(2) * NOISE / 1.702  # Plackett-Luce skill scale ~ Thurstone's
MODELS = {"bradley-terry": BradleyTerryFull, "plackett-luce": PlackettLuce,
          "thurstone-mosteller": ThurstoneMostellerFull}  # --model
Draw = Callable[[Sequence[float], random.Random], list[int]]  # skills -> ranks


# ----- the ladder, in-process ----------------------------------------------------------------
def ladder_meta(players: int, concurrency: int, seed: int) -> dict[str, Any]:
    return {"id": "l-bench", "name": "bench", "game": "aladino", "game_version": "bench",
            "players": players, "options": {}, "time_control": None, "deadline_ms": 1000,
            "policy": {}, "concurrency": concurrency, "paused": False, "seed": seed,
            "bot_cap": 4}


def thurstone(skills: Sequence[float], rng: random.Random) -> list[int]:
    """Ranks (1 best) by skill + Normal(0, beta^2) performances."""
    performance = [value + rng.gauss(0, NOISE) for value in skills]
    order = sorted(range(len(skills)), key=lambda seat: -performance[seat])
    return ranks_of(order)


def plackett_luce(skills: Sequence[float], rng: random.Random) -> list[int]:
    """Ranks (1 best): the winner drawn with weight exp(skill / scale), then the next..."""
    left = list(range(len(skills)))
    order = []
    while left:
        top = max(skills[seat] for seat in left)
        weights = [math.exp((skills[seat] - top) / PLL_SCALE) for seat in left]
        order.append(left.pop(rng.choices(range(len(left)), weights)[0]))
    return ranks_of(order)


def ranks_of(order: list[int]) -> list[int]:
    ranks = [0] * len(order)
    for place, seat in enumerate(order, 1):
        ranks[seat] = place
    return ranks


class Ladder:
    """A ladder's entries and state, counted and refilled as `tournament.ladders.count`
    does (its transaction without the store)."""

    def __init__(self, meta: dict, entries: dict[str, dict], hidden: dict[str, float],
                 draw: Draw, rng: random.Random, playing: dict[str, int] | None = None):
        self.meta, self.entries, self.hidden, self.draw, self.rng = (
            meta, entries, hidden, draw, rng)
        self.playing = playing if playing is not None else {}
        self.state: dict[str, Any] = {"scheduled": 0, "counted": 0, "running": {}}
        self.queue: deque[Any] = deque(self.plan())

    def plan(self) -> list[Any]:
        """`ladders._plan` with this in place of the store."""
        return ladders._plan(self.meta, self.state, self.entries, self)  # type: ignore[arg-type]

    # what `_plan` asks of the store
    def bots_playing(self, bots: list[str]) -> dict[str, int]:
        """How many matches each bot plays now, anywhere (the store: a SCARD per bot)."""
        return {bot: self.playing.get(bot, 0) for bot in bots}

    def suspended_accounts(self, owners: list[str]) -> set[str]:
        """The suspended accounts among these (none here)."""
        return set()

    def count_oldest(self) -> Any:
        """Count the oldest running match (its bots' entries rated); the match."""
        match = self.queue.popleft()
        bots = [seat["bot_id"] for seat in match["seats"]]
        ranks = self.draw([self.hidden[bot] for bot in bots], self.rng)
        result = {"seats": bots, "ranks": ranks, "faults": [0] * len(bots),
                  "forfeits": [False] * len(bots)}
        self.state["running"].pop(match["id"])
        self.state["counted"] += 1
        changed, _ = ladders._rate(self.entries, match, result, self.state["counted"])
        self.entries.update(changed)
        return match

    def refill(self) -> None:
        self.queue.extend(self.plan())


def active_entry(bot: str, owner: str | None) -> dict:
    return {**ladders.new_entry({"id": bot, "name": bot, "owner": owner}), "version": 1,
            "status": ladders.ACTIVE}


# ----- part 1: the cost at 10,000 entries ----------------------------------------------------
def big_entries(count: int, rng: random.Random, fresh: bool) -> tuple[dict, dict]:
    """`count` entries as a ladder that has run a while holds them (or, `fresh`, a new
    one: every entry active at 0 matches) and their hidden skills."""
    entries, hidden = {}, {}
    owners = max(count * 6 // 10, 1)
    for index in range(count):
        bot = f"b-{index:05d}"
        entry = active_entry(bot, f"u-{rng.randrange(owners)}")
        hidden[bot] = rng.gauss(skill.MU, skill.SIGMA)
        if not fresh:
            matches = 0 if rng.random() < 0.01 else 1 + int(rng.expovariate(1 / 150))
            version_matches = matches if rng.random() < 0.8 else rng.randint(0, matches)
            sigma = max(skill.SIGMA / math.sqrt(1 + version_matches / 3), 0.9)
            entry.update(matches=matches, version_matches=version_matches, sigma=sigma,
                         mu=hidden[bot] + rng.gauss(0, sigma) if matches else skill.MU)
            if rng.random() < 0.05:
                entry["status"] = rng.choice((ladders.CHECKING, ladders.SUSPENDED,
                                              ladders.LEFT))
        entries[bot] = entry
    return entries, hidden


def time_next_match(entries_count: int, players: int, calls: int, seed: int,
                    fresh: bool) -> list[float]:
    """Milliseconds per `next_match` call on the candidates of `entries_count` entries, the
    ladder kept at `BIG_CONCURRENCY` matches: a chosen bot leaves the list, and comes back
    rated (its counts up by one) when its match is counted, the oldest first."""
    rng = random.Random(seed)
    entries, hidden = big_entries(entries_count, rng, fresh)
    pool = [matchmaking.Candidate(bot, entry["owner"], entry["mu"], entry["sigma"],
                                  entry["matches"], entry["version_matches"])
            for bot, entry in entries.items() if entry["status"] in ladders.PLAYING]
    by_bot = {candidate.bot: candidate for candidate in pool}
    running: deque[list[matchmaking.Candidate]] = deque()
    spent = []
    for number in range(calls + BIG_CONCURRENCY):
        if len(running) == BIG_CONCURRENCY:
            seated = running.popleft()
            ranks = thurstone([hidden[entry.bot] for entry in seated], rng)
            after = skill.rate({entry.bot: skill.Skill(entry.mu, entry.sigma)
                                for entry in seated}, [entry.bot for entry in seated], ranks)
            for entry in seated:
                rated = matchmaking.Candidate(entry.bot, entry.owner, *after[entry.bot],
                                              entry.matches + 1, entry.version_matches + 1)
                by_bot[entry.bot] = rated
                bisect.insort(pool, rated, key=attrgetter("bot"))
        started = time.perf_counter()
        bots = matchmaking.next_match(pool, players, seed, number)
        if number >= BIG_CONCURRENCY:
            spent.append((time.perf_counter() - started) * 1000)
        if bots is None:
            raise RuntimeError("no match at 10,000 entries")
        seated = [by_bot[bot] for bot in bots]
        for entry in seated:
            pool.remove(entry)  # by identity: Candidate compares so
        running.append(seated)
    return spent


def time_plan(entries_count: int, players: int, refills: int, seed: int,
              collector: bool) -> dict[str, list[float]]:
    """Milliseconds per refill of one match after a count: the whole `_plan`, the
    `next_match` call in it, and the rest (the candidates built from the entries, the bot
    caps and owners looked up, the match's meta); the collector on or off."""
    rng = random.Random(seed)
    entries, hidden = big_entries(entries_count, rng, False)
    playing = {bot: int(rng.random() < 0.3) for bot in entries}
    ladder = Ladder(ladder_meta(players, BIG_CONCURRENCY, seed), entries, hidden,
                    thurstone, rng, playing)
    inner: list[float] = []
    real = matchmaking.next_match

    def timed(*args: Any) -> list[str] | None:
        started = time.perf_counter()
        chosen = real(*args)
        inner.append(time.perf_counter() - started)
        return chosen

    spent: dict[str, list[float]] = {"plan": [], "next_match": [], "rest": []}
    matchmaking.next_match = timed  # type: ignore[assignment]  # what `_plan` calls
    if not collector:
        gc.collect()
        gc.disable()
    try:
        for _ in range(refills):
            ladder.count_oldest()
            inner.clear()
            started = time.perf_counter()
            planned = ladder.plan()
            total = time.perf_counter() - started
            if len(planned) != 1 or len(inner) != 1:
                raise RuntimeError(f"a refill after a count planned {len(planned)} matches")
            ladder.queue.extend(planned)
            spent["plan"].append(total * 1000)
            spent["next_match"].append(inner[0] * 1000)
            spent["rest"].append((total - inner[0]) * 1000)
    finally:
        matchmaking.next_match = real
        gc.enable()
    return spent


def time_decode(entries: dict[str, dict], repeats: int) -> float:
    """Milliseconds to decode the stored entries as `LadderTransaction.entries` does."""
    raw = {bot.encode(): orjson.dumps(entry) for bot, entry in entries.items()}
    best = math.inf
    for _ in range(repeats):
        started = time.perf_counter()
        {bot: orjson.loads(raw[key]) for key, bot in sorted(
            ((key, key.decode()) for key in raw), key=lambda pair: pair[1])}
        best = min(best, time.perf_counter() - started)
    return best * 1000


# ----- part 2: convergence -------------------------------------------------------------------
def kendall_tau(scores: Sequence[float], truth: Sequence[float]) -> float:
    """Kendall's tau-a of `scores` against `truth` (a tie of either counts neither way)."""
    concordant = discordant = 0
    for i, j in combinations(range(len(scores)), 2):
        sign = (scores[i] - scores[j]) * (truth[i] - truth[j])
        if sign > 0:
            concordant += 1
        elif sign < 0:
            discordant += 1
    return (concordant - discordant) / (len(scores) * (len(scores) - 1) / 2)


def converge(bots: int, players: int, per_bot: int, seed: int, draw: Draw
             ) -> list[tuple[float, float, int, int]]:
    """(matches per bot, tau, fewest, most matches of a bot) after each `bots` seats."""
    rng = random.Random(seed)
    ids = [f"bot-{index:03d}" for index in range(bots)]
    quantiles = [skill.MU + skill.SIGMA * statistics.NormalDist().inv_cdf((k + 0.5) / bots)
                 for k in range(bots)]
    rng.shuffle(quantiles)
    hidden = dict(zip(ids, quantiles, strict=True))
    owners = [f"owner-{index % max(bots * 4 // 5, 1)}" for index in range(bots)]
    rng.shuffle(owners)
    entries = {bot: active_entry(bot, owner) for bot, owner in zip(ids, owners, strict=True)}
    ladder = Ladder(ladder_meta(players, ladders.DEFAULT_CONCURRENCY, seed), entries, hidden,
                    draw, rng)
    truth = [hidden[bot] for bot in ids]
    seats = 0
    curve: list[tuple[float, float, int, int]] = []
    while seats < per_bot * bots:
        seats += len(ladder.count_oldest()["seats"])
        ladder.refill()
        if seats // bots > len(curve):
            ordinals = [skill.Skill(entries[bot]["mu"], entries[bot]["sigma"]).ordinal
                        for bot in ids]
            counts = [entries[bot]["matches"] for bot in ids]
            curve.append((seats / bots, kendall_tau(ordinals, truth), min(counts),
                          max(counts)))
    return curve


def reached(curve: list[tuple[float, float, int, int]]) -> tuple[Any, Any]:
    """The first point at tau >= GOAL_TAU, and the first from which it stays so (None:
    never)."""
    first = next((point for point in curve if point[1] >= GOAL_TAU), None)
    stays = None
    for point in reversed(curve):
        if point[1] < GOAL_TAU:
            break
        stays = point
    return first, stays


def parameter(text: str) -> float:
    """25/6 or 4.1667."""
    top, _, bottom = text.partition("/")
    return float(top) / float(bottom) if bottom else float(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=1000, help="next_match calls timed")
    parser.add_argument("--refills", type=int, default=200, help="_plan calls timed")
    parser.add_argument("--bots", type=int, default=100)
    parser.add_argument("--matches-per-bot", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--beta", type=parameter, default=None,
                        help="simulate with another skill.BETA (e.g. 25/3)")
    parser.add_argument("--tau", type=parameter, default=None,
                        help="simulate with another skill.TAU (e.g. 0)")
    parser.add_argument("--model", choices=sorted(MODELS), default=None,
                        help="simulate with another openskill model")
    parser.add_argument("--parts", default="1,2", help="which parts to run: 1, 2 or 1,2")
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    parts = {int(part) for part in args.parts.split(",")}
    if args.quick:
        args.entries, args.calls, args.refills, args.bots, args.matches_per_bot, args.seeds = (
            500, 20, 10, 20, 30, 1)
    if args.beta is not None or args.tau is not None or args.model:  # this process only
        skill.BETA = skill.BETA if args.beta is None else args.beta
        skill.TAU = skill.TAU if args.tau is None else args.tau
        model_class = MODELS[args.model] if args.model else type(skill.model())
        skill.MODEL = f"openskill {model_class.__name__}"
        skill.model = functools.cache(lambda: model_class(
            mu=skill.MU, sigma=skill.SIGMA, beta=skill.BETA, tau=skill.TAU))
    _support.header(f"ladder: matchmaking at {args.entries:,} entries; convergence of "
                    f"{args.bots} bots of known strength",
                    f"matchmaking <= {GOAL_MS:g} ms p99 per match at 10,000 entries; "
                    f"kendall tau >= {GOAL_TAU} within the matches per bot the doc states")
    print(f"skill: {skill.MODEL}, mu {skill.MU:g}, sigma {skill.SIGMA:.4g}, beta "
          f"{skill.BETA:.4g}, tau {skill.TAU:.4g}; matchmaking window {matchmaking.WINDOW}, "
          f"balance slack {matchmaking.BALANCE_SLACK}")

    verdicts = part_one(args) if 1 in parts else []
    worst = part_two(args) if 2 in parts else {}
    print(f"\n{'goal':<48} {'measured':<33} verdict")
    for label, players, next_p99, plan_p99 in verdicts:
        measured = f"next_match {next_p99:.2f} ms" + (
            f", _plan {plan_p99:.2f} ms" if not math.isnan(plan_p99) else "")
        verdict = f"next_match {'met' if next_p99 <= GOAL_MS else 'missed'}" + (
            f", _plan {'met' if plan_p99 <= GOAL_MS else 'missed'}"
            if not math.isnan(plan_p99) else "")
        print(f"{f'p99 <= {GOAL_MS:g} ms, {label}, {players} players':<48} {measured:<33} "
              f"{verdict}")
    for players, per_bot in sorted(worst.items()):
        reach = (f"from {per_bot:.0f} matches per bot (worst run)" if per_bot < math.inf
                 else "not within some run")
        print(f"{f'tau >= {GOAL_TAU} for good, {players} players':<48} {reach:<33} "
              f"the doc's figure")
    print(_support.load())


def part_one(args: argparse.Namespace) -> list[tuple[str, int, float, float]]:
    print(f"\npart 1: ms per match chosen at {args.entries:,} entries, concurrency "
          f"{BIG_CONCURRENCY}")
    print(f"{'what is timed':<44} {'players':>7} {'calls':>6} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'max ms':>7}")

    def line(label: str, players: int, values: list[float]) -> None:
        print(f"{label:<44} {players:>7} {len(values):>6} "
              f"{_support.percentile(values, 0.5):>7.3f} "
              f"{_support.percentile(values, 0.99):>7.3f} {max(values):>7.3f}  "
              f"{_support.load()}")

    alone: dict[tuple[bool, int], float] = {}
    for fresh in (False, True):
        for players in (2, 4):
            calls = max(args.calls // 4, 1) if fresh else args.calls
            times = time_next_match(args.entries, players, calls, players, fresh)
            alone[fresh, players] = _support.percentile(times, 0.99)
            line(f"next_match, {'a fresh ladder (none played)' if fresh else 'played'}",
                 players, times)
    whole: dict[int, float] = {}
    for collector in (True, False):
        for players in (2, 4):
            spent = time_plan(args.entries, players, args.refills, players, collector)
            note = "" if collector else ", collector off"
            line(f"_plan after a count{note}", players, spent["plan"])
            line(f"  next_match in it{note}", players, spent["next_match"])
            line(f"  the rest of it{note}", players, spent["rest"])
            if collector:
                whole[players] = _support.percentile(spent["plan"], 0.99)
    gc.collect()
    entries, _ = big_entries(args.entries, random.Random(0), False)
    print(f"decoding {args.entries:,} stored entries (orjson, sorted by id, as each count's "
          f"transaction reads them; Redis not included): best of 5 "
          f"{time_decode(entries, 5):.2f} ms  {_support.load()}")
    return [(f"{args.entries:,} entries", players, alone[False, players], whole[players])
            for players in (2, 4)] + [
        (f"{args.entries:,} fresh entries", players, alone[True, players], math.nan)
        for players in (2, 4)]


def part_two(args: argparse.Namespace) -> dict[int, float]:
    print(f"\npart 2: {args.bots} bots, concurrency {ladders.DEFAULT_CONCURRENCY}, "
          f"{args.matches_per_bot} matches per bot, tau of the ordinals against the hidden "
          f"skills after each {args.bots} seats counted; matches per bot (fewest-most of a bot)")
    print(f"{'generated by':<14} {'players':>7} {'seed':>4} {'first tau >= 0.9':>21} "
          f"{'stays >= 0.9 from':>21} {'tau at end':>10} {'seconds':>7}")
    worst: dict[int, float] = {}
    for draw_name, draw in (("thurstone", thurstone), ("plackett-luce", plackett_luce)):
        for players in (2, 4):
            for seed in range(1, args.seeds + 1):
                started = time.perf_counter()
                curve = converge(args.bots, players, args.matches_per_bot, seed, draw)
                first, stays = reached(curve)
                cells = [f"{point[0]:>6.0f} ({point[2]:>3}-{point[3]:>3})" if point
                         else "never" for point in (first, stays)]
                print(f"{draw_name:<14} {players:>7} {seed:>4} {cells[0]:>21} {cells[1]:>21} "
                      f"{curve[-1][1]:>10.3f} {_support.elapsed(started):>7.1f}  "
                      f"{_support.load()}")
                worst[players] = max(worst.get(players, 0.0),
                                     stays[0] if stays else math.inf)
    return worst


if __name__ == "__main__":
    main()
