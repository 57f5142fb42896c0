"""Final scoring in the rulebook's order (rulebook "Scoring" and "Solo Scoring").

1. two points per vault coin, which then join the purse; 2. the five Professions, first and
second place by influence (at least one needed); the Noble (Influence 3) bonus; 3. three
points for the most total influence. Nothing here changes the state. The winner has the
most points; a tie goes to the most coins in purse, then is shared.
"""

from __future__ import annotations

from typing import Any

from engines.base import ranks_from_scores
from engines.types import Result, State

from .block import count_in_block
from .components import PROFESSIONS, influence, profession
from .table import Holder, RivalHolder

VAULT_COIN_POINTS = 2
N3_BONUS = 3
MOST_INFLUENCE_POINTS = 3
SOLO_BANDS = [
    (0, "The citizens demand your exile from the city, and look to new leadership."),
    (30, "Cartagena survives your mediocre leadership, and you are left to retire in peace."),
    (40, "Cartagena grows, and you are fondly remembered by the citizens."),
    (50, "Cartagena flourishes, and your name will be honored as beloved patron of the city."),
]


def block_doors(holder: Holder) -> list[tuple[int, int]]:
    """(card, coins on it) for every door in the block."""
    return [(card, holder["coins"][i]) for i, card in enumerate(holder["block"])
            if card is not None]


def influence_by_profession(holder: Holder) -> dict[str, int]:
    """Printed influence in block and vault, plus coins on block doors, per Profession."""
    totals = dict.fromkeys(PROFESSIONS, 0)
    for card, coins in block_doors(holder):
        totals[profession(card)] += influence(card) + coins
    for card in holder["vault_cards"]:
        totals[profession(card)] += influence(card)
    return totals


def conditions(holder: Holder) -> dict[str, tuple[int, int]]:
    """(primary, secondary) points each Profession would give this holder."""
    doors = block_doors(holder)
    nobles = sum(1 for card, _ in doors if profession(card) == "noble")
    hand = sum(influence(card) for card in holder["hand"])
    purse = holder["purse"] + holder["vault_coins"]
    block_influence = sum(influence(card) + coins for card, coins in doors)
    others = sum(1 for card, _ in doors if profession(card) != "builder")
    return {
        "soldier": (3 * nobles, nobles),
        "fisher": (hand, hand // 2),
        "noble": (purse, purse // 2),
        "clergy": (block_influence // 3, block_influence // 5),
        "builder": (others, others // 2),
    }


def places(values: list[int], award_second: bool) -> list[int | None]:
    """1 for everyone tied for most, 2 for everyone tied for second-most when the most is
    held alone; None otherwise. Fewer than one influence is never placed."""
    eligible = [v for v in values if v >= 1]
    if not eligible:
        return [None] * len(values)
    best = max(eligible)
    placed: list[int | None] = [1 if v == best else None for v in values]
    runners = [v for v in eligible if v < best]
    if award_second and placed.count(1) == 1 and runners:
        second = max(runners)
        placed = [2 if v == second else p for v, p in zip(values, placed, strict=True)]
    return placed


def score_holders(holders: list[Holder], scored: int, award_second: bool
                  ) -> list[dict[str, Any]]:
    """Breakdowns of the first `scored` holders; the others (the Rival) only compete."""
    influences = [influence_by_profession(h) for h in holders]
    totals = [sum(i.values()) for i in influences]
    most = places(totals, award_second=False)
    per_profession = {
        prof: places([i[prof] for i in influences], award_second) for prof in PROFESSIONS
    }
    return [
        breakdown(holder, influences[n], {p: per_profession[p][n] for p in PROFESSIONS},
                  totals[n], most[n] == 1)
        for n, holder in enumerate(holders[:scored])
    ]


def breakdown(holder: Holder, influences: dict[str, int], placed: dict[str, int | None],
              total_influence: int, most_influence: bool) -> dict[str, Any]:
    """One holder's points: vault coins, professions, N3 bonus, most influence, total."""
    points_if = conditions(holder)
    professions: dict[str, dict[str, int | None]] = {}
    profession_points = 0
    for prof in PROFESSIONS:
        place = placed[prof]
        points = points_if[prof][place - 1] if place else 0
        professions[prof] = {"influence": influences[prof], "place": place, "points": points}
        profession_points += points
    n3 = count_in_block(holder["block"], "N3")
    parts: dict[str, Any] = {
        "vault_coins": holder["vault_coins"],
        "vault_coin_points": VAULT_COIN_POINTS * holder["vault_coins"],
        "professions": professions,
        "n3_bonus": N3_BONUS * n3,
        "total_influence": total_influence,
        "most_influence_points": MOST_INFLUENCE_POINTS if most_influence else 0,
        "purse_at_end": holder["purse"] + holder["vault_coins"],
    }
    parts["total"] = (
        parts["vault_coin_points"] + profession_points + parts["n3_bonus"]
        + parts["most_influence_points"]
    )
    return parts


def band(score: int) -> str:
    return [text for low, text in SOLO_BANDS if score >= low][-1]


def rival_summary(rival: RivalHolder) -> dict[str, Any]:
    influences = influence_by_profession(rival)
    return {"influence": influences, "total_influence": sum(influences.values()),
            "vault_cards": list(rival["vault_cards"])}


def result(state: State) -> Result:
    if state["mode"] == "solo":
        return solo_result(state)
    breakdowns = score_holders(state["players"], len(state["players"]), award_second=True)
    scores = [b["total"] for b in breakdowns]
    purses = [b["purse_at_end"] for b in breakdowns]
    return {
        "scores": scores,
        "ranks": ranks_from_scores(scores, purses),
        "details": {"players": breakdowns, "tie_break": "most coins in purse, then shared"},
    }


def solo_result(state: State) -> Result:
    """Solidad: the score, its band and the Rival's influence (rulebook "Solo Scoring")."""
    holders = [state["players"][0], state["rival"]]
    scored = score_holders(holders, 1, award_second=False)[0]
    score: int = scored["total"]
    return {
        "scores": [score],
        "ranks": [1],
        "details": {
            "players": [scored],
            "score": score,
            "band": band(score),
            "rival": rival_summary(state["rival"]),
            "won_profession": {prof: entry["place"] == 1
                               for prof, entry in scored["professions"].items()},
        },
    }
