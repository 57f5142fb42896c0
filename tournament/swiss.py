"""Swiss pairing and standings: pure functions over bot ids, points and past meetings.

Each round pairs bots with equal or nearest points who have not met. The pairing of a round
is a minimum-cost perfect matching (Edmonds' blossom algorithm, networkx's
`max_weight_matching`) over all bots, where pairing i with j costs, in strict priority:

1. the times they met before (so no pair meets again while a pairing of the round without
   a repeat exists, and repeats, once unavoidable, go to the pairs that met least);
2. the square of their difference in points (equal points first, then the nearest);
3. their distance in the standings (ties broken towards neighbours, deterministically).

With an odd count a virtual bye joins the matching: taking it costs the byes the bot had
before, then its height in the standings (both after repeats, before points): the
lowest-placed bot without a bye gets it. A bye scores as a won pairing: `BYE_POINTS`.

Standings order by points, then Buchholz (the sum of the current points of every opponent
met, once per meeting; a bye adds nothing), then entry order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction

import networkx as nx

BYE = ("bye",)  # the virtual opponent of an odd count (no bot id is a tuple)
BYE_POINTS = Fraction(2)  # a pairing is two games: a bye wins both


def meeting(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


def order(bots: Sequence[str], points: Mapping[str, Fraction],
          buchholz: Mapping[str, Fraction] | None = None) -> list[str]:
    """Bots by points, then Buchholz, then entry order."""
    entry = {bot: index for index, bot in enumerate(bots)}
    tie = buchholz or {}
    return sorted(bots, key=lambda bot: (-points.get(bot, 0), -tie.get(bot, 0), entry[bot]))


def pair_round(bots: Sequence[str], points: Mapping[str, Fraction],
               met: Counter[frozenset[str]], byes: Mapping[str, int]
               ) -> tuple[list[tuple[str, str]], str | None]:
    """The pairings of the next round (the higher-placed bot first) and the bot with the
    bye (None with an even count)."""
    ranked = order(bots, points)
    place = {bot: index for index, bot in enumerate(ranked)}
    span = len(ranked) ** 2  # above any sum of standings distances of one matching
    half = {bot: int(points.get(bot, 0) * 2) for bot in ranked}
    costs: dict[tuple, tuple[int, int, int, int]] = {}
    for i, a in enumerate(ranked):
        for b in ranked[i + 1:]:
            costs[(a, b)] = (met[meeting(a, b)], 0, 0, (half[a] - half[b]) ** 2 * span
                             + abs(place[a] - place[b]))
        if len(ranked) % 2:
            costs[(a, BYE)] = (0, byes.get(a, 0), len(ranked) - 1 - place[a], 0)
    matching = _min_cost_perfect_matching(costs)
    bye = next((a if b == BYE else b for a, b in matching if BYE in (a, b)), None)
    pairs = sorted((tuple(sorted(pair, key=place.__getitem__)) for pair in matching
                    if BYE not in pair), key=lambda pair: place[pair[0]])
    return pairs, bye


def _min_cost_perfect_matching(costs: Mapping[tuple, tuple[int, ...]]) -> list[tuple]:
    """A perfect matching of least cost, costs compared as tuples: each tier is scaled above
    any sum of the tiers after it, and weights are integers, so networkx keeps to exact
    integer arithmetic."""
    flat = dict.fromkeys(costs, 0)
    for tier in range(len(next(iter(costs.values())))):
        scale = sum(cost[tier] for cost in costs.values()) + 1
        flat = {edge: flat[edge] * scale + cost[tier] for edge, cost in costs.items()}
    top = max(flat.values()) + 1
    graph = nx.Graph()
    for (a, b), cost in flat.items():
        graph.add_edge(a, b, weight=top - cost)
    return list(nx.max_weight_matching(graph, maxcardinality=True))


def buchholz(points: Mapping[str, Fraction],
             opponents: Mapping[str, Sequence[str]]) -> dict[str, Fraction]:
    """Each bot's sum of its opponents' points, once per meeting."""
    return {bot: sum((points.get(other, Fraction(0)) for other in met), Fraction(0))
            for bot, met in opponents.items()}


def standings(bots: Sequence[str], points: Mapping[str, Fraction],
              opponents: Mapping[str, Sequence[str]], byes: Mapping[str, int]) -> list[dict]:
    """Rows best first: bot, points, buchholz, opponents met (in order), byes."""
    ties = buchholz(points, {bot: opponents.get(bot, []) for bot in bots})
    return [{"bot": bot, "points": float(points.get(bot, 0)), "buchholz": float(ties[bot]),
             "opponents": list(opponents.get(bot, [])), "byes": byes.get(bot, 0)}
            for bot in order(bots, points, ties)]
