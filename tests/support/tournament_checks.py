"""Helpers of the tournament tests: start and follow a tournament; check that a finished
round-robin and the live Elo agree with the matches stored by the workers."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from math import comb

import orjson
import pytest
import redis

from referee.match import merkle, replay
from referee.match.sealing import Verifier, from_b64url
from referee.match.verify import verify
from tests.support.apitest import ADMIN
from tournament import ratings
from tournament.store import ratings_key


def start(api, game: str, bots: list[str], players: int, rounds: int = 1, **fields) -> dict:
    response = api.post("/tournaments", token=ADMIN, json={
        "game": game, "bots": bots, "players": players, "rounds": rounds, "deadline_ms": 5000,
        **fields})
    assert response.status_code == 201, response.get_json()
    assert response.headers["Location"] == f"/tournaments/{response.get_json()['id']}"
    return response.get_json()


def finished_matches(api, view: dict) -> list[dict]:
    matches = [api.get(f"/matches/{match_id}").get_json() for match_id in view["matches"]]
    assert all(match["status"] == "finished" for match in matches)
    return matches


def match_results(matches: list[dict]) -> list[dict]:
    return [{"seats": [seat["bot_id"] for seat in match["seats"]],
             "ranks": match["result"]["ranks"], "scores": match["result"]["scores"]}
            for match in matches]


def check_round_robin(api, view: dict, bots: list[str], players: int, rounds: int) -> None:
    """The expected number of matches, every bot in every seat equally often, every
    combination played in every rotation on one seed, standings and ratings that agree
    with the stored match results."""
    total = comb(len(bots), players) * players * rounds
    assert view["status"] == "finished"
    assert view["progress"] == {"total": total, "done": total, "failed": 0, "running": 0,
                                "queued": 0}
    assert len(view["matches"]) == len(set(view["matches"])) == total
    matches = finished_matches(api, view)
    seats = Counter((seat["bot_id"], seat["seat"]) for m in matches for seat in m["seats"])
    assert seats == {(bot, seat): comb(len(bots) - 1, players - 1) * rounds
                     for bot in bots for seat in range(players)}
    by_seed: dict[int, set[tuple[str, ...]]] = {}
    for match in matches:
        by_seed.setdefault(match["seed"], set()).add(tuple(s["bot_id"] for s in match["seats"]))
    assert len(by_seed) == comb(len(bots), players) * rounds
    for seatings in by_seed.values():
        assert len(seatings) == players and len({frozenset(s) for s in seatings}) == 1
    results = match_results(matches)
    table = {row["bot_id"]: row for row in view["standings"]}
    assert set(table) == set(bots) and [row["rank"] for row in view["standings"]] == [1, 2, 3, 4]
    assert all(row["matches"] == comb(len(bots) - 1, players - 1) * players * rounds
               for row in table.values())
    assert sum(row["points"] for row in table.values()) == pytest.approx(total * players / 2)
    cells = view["cross_table"]["cells"]
    for a, b in combinations(bots, 2):
        assert cells[a][b] + cells[b][a] == comb(len(bots) - 2, players - 2) * players * rounds
    expected = ratings.bradley_terry(results)
    assert [(r["bot_id"], r["rating"], r["low"], r["high"], r["games"]) for r in view["ratings"]] \
        == [(r["bot"], r["rating"], r["low"], r["high"], r["games"]) for r in expected]
    assert view["solo_ranking"] is None and view["seed"] is not None


def check_live_elo(api, redis_url: str, game: str, matches: list[dict]) -> None:
    """Every finished match counted exactly once, and the leaderboard equal to Elo replayed
    from the stored results in the order they were counted."""
    client = redis.Redis.from_url(redis_url)
    counted = [orjson.loads(raw) for raw in client.lrange(ratings_key(game, "results"), 0, -1)]
    client.close()
    assert sorted(r["match_id"] for r in counted) == sorted(m["id"] for m in matches)
    assert sorted(map(orjson.dumps, match_results(matches))) == sorted(
        orjson.dumps({key: r[key] for key in ("seats", "ranks", "scores")}) for r in counted)
    board = api.get(f"/ratings/{game}").get_json()
    replayed = ratings.elo_replay(counted)
    assert {row["bot_id"]: row["rating"] for row in board["leaderboard"]} == {
        bot: round(rating, ratings.DECIMALS) for bot, rating in replayed.items()}
    games = Counter(bot for m in matches for bot in {s["bot_id"] for s in m["seats"]})
    assert {row["bot_id"]: row["games"] for row in board["leaderboard"]} == games
    history = histories(api, game, board)
    assert {bot: len(points) for bot, points in history.items()} == games
    for row in board["leaderboard"]:
        assert history[row["bot_id"]][-1] == [row["games"], row["rating"], 1]
    check_first_update_by_hand(history, counted[0])


def histories(api, game: str, board: dict) -> dict[str, list[list]]:
    """Every leaderboard bot's whole rating history, read a page at a time."""
    found = {}
    for row in board["leaderboard"]:
        points: list[list] = []
        while True:
            page = api.get(f"/ratings/{game}/history?bot={row['bot_id']}&offset={len(points)}"
                           "&limit=7").get_json()
            points += page["history"]
            if len(points) >= page["total"]:
                break
        found[row["bot_id"]] = points
    return found


def check_first_update_by_hand(history: dict[str, list[list]], first: dict) -> None:
    """The first rated match starts every seat at 1500, where each expected pair score
    is 1/2: a seat moves by K/(n-1) * sum over the others of (pair score - 1/2), K = 32."""
    ranks, n = first["ranks"], len(first["ranks"])
    for seat, bot in enumerate(first["seats"]):
        pairs = [1 if ranks[seat] < other else 0.5 if ranks[seat] == other else 0
                 for j, other in enumerate(ranks) if j != seat]
        expected = 1500 + 32 / (n - 1) * sum(score - 0.5 for score in pairs)
        assert history[bot][0] == [1, pytest.approx(expected, abs=1e-6), 1]


def perfect_matchings(bots: list[str]):
    """Every way to split `bots` (an even count) into pairs."""
    if not bots:
        yield []
        return
    first, rest = bots[0], bots[1:]
    for index, other in enumerate(rest):
        for tail in perfect_matchings(rest[:index] + rest[index + 1:]):
            yield [(first, other), *tail]


def repeat_free_round_exists(bots: list[str], met: Counter) -> bool:
    """Brute force: some bye (odd count) and pairing of the rest without a repeat."""
    choices = [[]] if len(bots) % 2 == 0 else [[bye] for bye in bots]
    for bye in choices:
        rest = [bot for bot in bots if bot not in bye]
        if any(all(not met[frozenset((a, b))] for a, b in matching)
               for matching in perfect_matchings(rest)):
            return True
    return False


def check_logged_once(api, match_ids: list[str]) -> None:
    """Issue 25: the results log holds each finished match exactly once, at indexes 0..n-1
    with no gap; each entry's leaf is the hash of the record served; the head's root is the
    root of those leaves; every record verifies with only the public keys of GET /keys."""
    head = api.get("/log/head").get_json()
    entries = api.get(f"/log/entries?start=0&end={max(head['tree_size'], 1)}").get_json()[
        "entries"] if head["tree_size"] else []
    assert [entry["index"] for entry in entries] == list(range(len(entries)))
    assert sorted(entry["match_id"] for entry in entries) == sorted(match_ids)
    keys = Verifier.of(from_b64url(key["public_key"])
                       for key in api.get("/keys").get_json()["keys"])
    for entry in entries:
        assert api.get(f"/matches/{entry['match_id']}").get_json()["log_index"] == entry[
            "index"]
        record = api.get(f"/matches/{entry['match_id']}/replay", token=ADMIN).get_json()
        assert record["log"]["index"] == entry["index"]
        logged = {k: v for k, v in record.items() if k != "log"}
        assert merkle.leaf_hash(replay.leaf_data(logged)).hex() == entry["leaf_hash"]
        report = verify(record, keys)
        assert report.valid and report.signature == "valid" and report.log == "valid", report
    root = merkle.tree_root(bytes.fromhex(entry["leaf_hash"]) for entry in entries)
    assert head["root_hash"] == root.hex()
