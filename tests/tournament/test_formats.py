"""SPRT, gauntlet and Swiss tournaments through the API, played by real `referee worker`
processes against real HTTP bots (issue 19); every response is checked against
openapi.yaml.

Bots of known strength on Aladino (short games, about 25 decisions): the greedy example bot
(`bots/python/aladino_bot.py`) wins about 98% of its pairs against the random bot, both seat
orders on one deal (300 deals played in-process: 294 pairs won twice, 6 split). With
elo0 = 0 and elo1 = 150 the LLR crosses log((1 - β)/α) = 2.94 after 9 pairs won twice
(12 with a split pair among them): H1 well within max_matches = 80. The greedy bot is
deterministic, so against itself on a paired deal both matches are played move for move
alike and every pair splits (WL) or is drawn twice (DD): the pair score is always 1/2 and
the LLR falls below log(β/(1 - α)) = -2.94 after 6 pairs. Neither outcome depends on luck.
"""

from __future__ import annotations

import threading
from collections import Counter
from math import comb

import pytest

from tests.support.apitest import ADMIN, drive_match, wait_finished
from tests.support.tournament_checks import repeat_free_round_exists
from tournament import formats, ratings, sprt, wakeups
from tournament.store import Store

SPRT_TEST = {"elo0": 0, "elo1": 150, "max_matches": 80, "concurrency": 4,
             "deadline_ms": 20000}


def create(api, **body) -> dict:
    response = api.post("/tournaments", token=ADMIN, json={"game": "aladino", **body})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def pentanomial_from_matches(api, view: dict) -> list[int]:
    """Recount the pairs from the stored matches: pair k is matches 2k and 2k+1."""
    challenger = view["challenger"]
    counts = [0] * 5
    ids = view["matches"]
    for first in range(0, len(ids), 2):
        pair = [api.get(f"/matches/{m}").get_json() for m in ids[first:first + 2]]
        assert pair[0]["seed"] == pair[1]["seed"], "one deal per pair"
        assert [s["bot_id"] for s in pair[0]["seats"]] == \
            [s["bot_id"] for s in reversed(pair[1]["seats"])], "the seats swapped"
        scores = []
        for match in pair:
            mine = next(s["seat"] for s in match["seats"] if s["bot_id"] == challenger)
            ranks = match["result"]["ranks"]
            scores.append(ratings.pair_score(ranks[mine], ranks[1 - mine]))
        counts[round(sum(scores) * 2)] += 1
    return counts


def check_sprt_finished(api, view: dict, decision: str) -> dict:
    """The decision, when it was taken, what was scheduled after it, and the numbers."""
    result = view["sprt"]
    assert result["decision"] == decision
    history = [llr for _, llr, _ in result["history"]]
    assert Counter(bucket for _, _, bucket in result["history"]) == Counter(
        {bucket: count for bucket, count in enumerate(result["pentanomial"]) if count})
    decided = result["decided_after"]
    assert all(result["lower"] < llr < result["upper"] for llr in history[:decided - 1])
    crossed = history[decided - 1]
    assert crossed >= result["upper"] if decision == "H1" else crossed <= result["lower"]
    assert result["scheduled_pairs"] <= decided + 2, "at most concurrency / 2 pairs in flight"
    assert 2 * result["scheduled_pairs"] <= SPRT_TEST["max_matches"]
    assert view["progress"] == {"total": 2 * result["scheduled_pairs"],
                                "done": 2 * result["scheduled_pairs"], "failed": 0,
                                "running": 0, "queued": 0}
    assert result["pentanomial"] == pentanomial_from_matches(api, view)
    assert result["pairs"] == result["scheduled_pairs"] == len(history)
    assert result["llr"] == pytest.approx(sprt.llr(result["pentanomial"], sprt.Hypotheses(
        0, 150)), abs=1e-6)
    estimate = sprt.elo_estimate(result["pentanomial"])
    assert (result["elo"], result["elo_low"], result["elo_high"]) == pytest.approx(
        (estimate.elo, estimate.low, estimate.high), abs=0.01)
    return result


def test_sprt_accepts_h1_for_the_greedy_bot_against_the_random_one(api, strength_urls,
                                                                   workers):
    greedy = api.register_bot(strength_urls["greedy"], games=["aladino"], name="greedy")
    rand = api.register_bot(strength_urls["random"], games=["aladino"], name="random")
    view = create(api, format="sprt", bots=[greedy, rand], **SPRT_TEST)
    assert view["format"] == "sprt" and view["challenger"] == greedy
    assert view["sprt"]["scheduled_pairs"] == 2 and len(view["matches"]) == 4
    workers.start(2)
    final = wait_finished(api, view["id"], timeout=240)
    result = check_sprt_finished(api, final, "H1")
    assert result["elo_low"] > 0
    assert final["ratings"][0]["bot_id"] == greedy


def test_sprt_accepts_h0_for_a_bot_against_itself(api, strength_urls, workers):
    first = api.register_bot(strength_urls["greedy"], games=["aladino"], name="greedy-new")
    second = api.register_bot(strength_urls["greedy"], games=["aladino"], name="greedy-old")
    view = create(api, format="sprt", bots=[first, second], **SPRT_TEST)
    workers.start(2)
    final = wait_finished(api, view["id"], timeout=240)
    result = check_sprt_finished(api, final, "H0")
    assert result["pentanomial"] == [0, 0, result["pairs"], 0, 0]
    assert result["elo"] == pytest.approx(0, abs=1e-6)


def test_a_solo_sprt_plays_both_bots_on_each_deal(api, register_bots, workers):
    bots = register_bots(2)
    view = create(api, game="aldabas", format="sprt", bots=bots, players=1,
                  options={"mode": "solo"}, max_matches=4, concurrency=4, deadline_ms=20000)
    workers.start(2)
    final = wait_finished(api, view["id"], timeout=240)
    matches = [api.get(f"/matches/{m}").get_json() for m in final["matches"]]
    assert [[s["bot_id"] for s in m["seats"]] for m in matches] == [bots[:1], bots[1:]] * 2
    assert matches[0]["seed"] == matches[1]["seed"] != matches[2]["seed"] == matches[3]["seed"]
    expected = [0] * 5
    for mine, other in ((matches[0], matches[1]), (matches[2], matches[3])):
        game = sprt.game_score(mine["result"]["scores"][0], other["result"]["scores"][0])
        expected[sprt.pair_bucket([game])] += 1
    assert final["sprt"]["pentanomial"] == expected and final["sprt"]["games"] == 2
    assert final["solo_ranking"] is not None


def test_a_pair_is_scheduled_once_however_many_processes_advance_at_once(
        api, config, register_bots):
    """The last two matches of a pair finish on two threads while eight more call
    `advance` (as a sweep would): the next pair is queued exactly once each time."""
    bots = register_bots(2)
    view = create(api, format="sprt", bots=bots, max_matches=10, concurrency=2,
                  deadline_ms=20000)
    store = Store.from_url(config.redis_url)
    for pair in range(3):
        ids = view_of(api, view["id"])["matches"]
        assert len(ids) == 2 * (pair + 1), "one pair in flight, queued once"
        race = [threading.Thread(target=drive_match, args=(config.redis_url, m))
                for m in ids[-2:]]
        race += [threading.Thread(target=formats.advance, args=(store, view["id"]))
                 for _ in range(8)]
        for thread in race:
            thread.start()
        for thread in race:
            thread.join()
    final = view_of(api, view["id"])
    assert len(final["matches"]) == len(set(final["matches"])) == 8
    assert final["sprt"]["pairs"] == 3 and final["sprt"]["scheduled_pairs"] == 4
    queued = Counter(store.queue().job_ids)
    assert queued == Counter(wakeups.job_id(m) for m in final["matches"]), "each queued once"


def view_of(api, tournament_id: str) -> dict:
    return api.get(f"/tournaments/{tournament_id}").get_json()


@pytest.mark.parametrize("players", [2, 3])
def test_gauntlet_match_counts_equal_the_formula(api, register_bots, workers, players):
    """docs/ratings.md: C(field, players - 1) * players * rounds matches."""
    challenger, *field = register_bots(4)
    view = create(api, format="gauntlet", challenger=challenger, bots=field,
                  players=players, rounds=1, deadline_ms=20000)
    expected = comb(len(field), players - 1) * players
    assert view["progress"]["total"] == len(view["matches"]) == expected
    workers.start(2)
    final = wait_finished(api, view["id"], timeout=240)
    matches = [api.get(f"/matches/{m}").get_json() for m in final["matches"]]
    assert len(matches) == expected and final["challenger"] == challenger
    assert all(challenger in [s["bot_id"] for s in m["seats"]] for m in matches)
    seats = Counter(next(s["seat"] for s in m["seats"] if s["bot_id"] == challenger)
                    for m in matches)
    assert set(seats.values()) == {expected // players}
    assert {row["bot_id"] for row in final["standings"]} == {challenger, *field}


def test_swiss_pairs_by_points_without_repeats_and_orders_ties_by_buchholz(
        api, register_bots, workers):
    bots = register_bots(5)
    view = create(api, format="swiss", bots=bots, rounds=4, deadline_ms=20000)
    assert view["progress"]["total"] == 4 * 2 * 2 and len(view["swiss"]["rounds"]) == 1
    workers.start(2)
    final = wait_finished(api, view["id"], timeout=240)
    rounds = final["swiss"]["rounds"]
    assert len(rounds) == 4 and len(final["matches"]) == 16
    met: Counter = Counter()
    points = Counter()
    opponents: dict[str, list[str]] = {bot: [] for bot in bots}
    for played in rounds:
        playing = [bot for pairing in played["pairings"] for bot in pairing["bots"]]
        assert sorted(playing + [played["bye"]]) == sorted(bots)
        repeats = [p["bots"] for p in played["pairings"] if met[frozenset(p["bots"])]]
        assert not repeats or not repeat_free_round_exists(bots, met)
        for pairing in played["pairings"]:
            a, b = pairing["bots"]
            met[frozenset((a, b))] += 1
            opponents[a].append(b)
            opponents[b].append(a)
            first, second = (api.get(f"/matches/{m}").get_json() for m in pairing["matches"])
            assert [s["bot_id"] for s in first["seats"]] == [a, b]
            assert [s["bot_id"] for s in second["seats"]] == [b, a]
            assert first["seed"] == second["seed"]
            for match in (first, second):
                ranks = match["result"]["ranks"]
                ids = [s["bot_id"] for s in match["seats"]]
                points[ids[0]] += ratings.pair_score(ranks[0], ranks[1])
                points[ids[1]] += ratings.pair_score(ranks[1], ranks[0])
        points[played["bye"]] += 2
    rows = final["swiss"]["standings"]
    assert {row["bot_id"]: row["points"] for row in rows} == {b: points[b] for b in bots}
    for row in rows:
        assert row["buchholz"] == sum(points[o] for o in opponents[row["bot_id"]])
    keys = [(-row["points"], -row["buchholz"]) for row in rows]
    assert keys == sorted(keys)


@pytest.mark.parametrize(("change", "field", "reason", "status"), [
    ({"format": "sprt", "bots": 3}, "bots", "exactly 2", 422),
    ({"format": "sprt", "elo0": 5, "elo1": 5}, "elo1", "below elo1", 422),
    ({"format": "sprt", "alpha": 0}, "alpha", "", 400),
    ({"format": "sprt", "beta": 0.5}, "beta", "", 400),
    ({"format": "sprt", "players": 3}, "players", "2 players", 422),
    ({"format": "sprt", "rounds": 3}, "rounds", "not a field of the sprt format", 422),
    ({"format": "sprt", "max_matches": 1}, "max_matches", "", 400),
    ({"format": "sprt", "elo1": 1e300}, "elo1", "", 400),
    ({"format": "gauntlet"}, "challenger", "needs its challenger", 422),
    ({"format": "gauntlet", "challenger": 0}, "challenger", "not part of its own field", 422),
    ({"format": "gauntlet", "challenger": 2, "bots": 2, "players": 1, "game": "aldabas",
      "options": {"mode": "solo"}}, "players", "at least 2", 422),
    ({"format": "swiss", "players": 3}, "players", "2 players", 422),
    ({"elo0": 1}, "elo0", "not a field of the round_robin format", 422),
    ({"format": "knockout"}, "format", "", 400),
    ({"deals": "shuffled"}, "deals", "", 400),
])
def test_format_fields_are_validated_and_named(api, register_bots, change, field, reason,
                                               status):
    """400 for what the spec says of a field alone; 422 for what depends on the other
    fields (the format) or on the registered bots, which no schema can say."""
    bots = register_bots(3)
    body = {"game": "aladino", "bots": bots[:2], **change}
    if isinstance(change.get("bots"), int):
        body["bots"] = bots[:change["bots"]]
    if isinstance(change.get("challenger"), int):
        body["challenger"] = bots[change["challenger"]]
    response = api.post("/tournaments", token=ADMIN, json=body)
    assert response.status_code == status, response.get_json()
    errors = response.get_json()["errors"]
    assert field in errors and reason in str(errors[field]), errors

