"""Every integer the API emits survives JavaScript's JSON.parse, and a replay that a
JavaScript client parsed and wrote again still verifies (issue 15.1).

The round trip runs in a real `node` process against the app served on a loopback port,
with a match played by a real `referee worker`."""

from __future__ import annotations

import json
import shutil
import subprocess

import orjson
import pytest
import yaml

import engines
from referee.api.common import MAX_SAFE_INTEGER
from referee.match import replay
from referee.match.botclient import BotReply
from referee.match.runner import FailurePolicy, run_match
from tests.support.apitest import ADMIN, SPEC_PATH, SUPPORT, V1_RECORD, sealer_of_tests

NODE_ROUND_TRIP = SUPPORT / "js_round_trip.js"


def _response_schemas(spec: dict) -> set[str]:
    """The component schemas that responses use, directly or nested."""
    found: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            if ref.startswith("#/components/schemas/"):
                name = ref.rsplit("/", 1)[1]
                if name not in found:
                    found.add(name)
                    walk(spec["components"]["schemas"][name])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for operations in spec["paths"].values():
        for operation in operations.values():
            walk(operation["responses"])
    return found


def _integers(node, where: str):
    """(where, schema) of every integer schema inside a component schema."""
    if isinstance(node, dict):
        kinds = node.get("type")
        if kinds == "integer" or (isinstance(kinds, list) and "integer" in kinds):
            yield where, node
        for key, value in node.items():
            yield from _integers(value, f"{where}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _integers(value, f"{where}[{index}]")


def test_every_integer_a_response_holds_is_documented_as_javascript_safe():
    spec = yaml.safe_load(SPEC_PATH.read_text())
    names = _response_schemas(spec)
    assert {"Match", "Replay", "ReplayStep", "Tournament", "Problem"} <= names
    checked = 0
    for name in sorted(names):
        for where, schema in _integers(spec["components"]["schemas"][name], name):
            assert schema.get("maximum", float("inf")) <= MAX_SAFE_INTEGER, where
            checked += 1
    assert checked > 50


def _all_integers(value):
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _all_integers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _all_integers(item)


@pytest.mark.parametrize("game", engines.names())
def test_the_free_form_parts_hold_only_javascript_safe_integers(game):
    """Descriptions, observations (views) and results are engine JSON the schemas do not
    type: every integer in them, over a whole match at the largest seed, is safe."""
    engine = engines.get(game)
    assert all(abs(n) <= MAX_SAFE_INTEGER for n in _all_integers(engine.describe()))
    for variant in engine.variants():
        state = engine.new_game(variant["num_players"], MAX_SAFE_INTEGER, variant["options"])
        while True:
            views = [engine.observation(state, seat) for seat in range(engine.seats(state))]
            views.append(engine.observation(state, None))
            assert all(abs(n) <= MAX_SAFE_INTEGER for n in _all_integers(views))
            if engine.is_over(state):
                break
            state = engine.apply(state, engine.legal_actions(state)[-1])
        assert all(abs(n) <= MAX_SAFE_INTEGER for n in _all_integers(engine.result(state)))


def test_a_drawn_seed_is_javascript_safe(api):
    """Drawn from 0..2**53 - 1: twenty draws from 0..2**63 - 1 would all but surely
    include one above 2**53."""
    seeds = [api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}])["seed"]
             for _ in range(20)]
    assert all(0 <= seed <= MAX_SAFE_INTEGER for seed in seeds)
    assert len(set(seeds)) == 20


def test_a_larger_seed_is_refused_with_the_range(api):
    body = {"game": "aladino", "seats": [{"kind": "pull"}, {"kind": "pull"}]}
    response = api.post("/matches", token=ADMIN, json={**body, "seed": MAX_SAFE_INTEGER + 1})
    assert response.status_code == 400
    assert "9007199254740991" in response.get_json()["errors"]["seed"][0]
    assert api.create_match("aladino", body["seats"], seed=MAX_SAFE_INTEGER)["seed"] == (
        MAX_SAFE_INTEGER)


class ThreeMillisecondSeat:
    """An in-process seat whose every answer took exactly 3.0 ms: JavaScript writes 3."""

    deadline_ms = 2000

    def info(self) -> dict:
        return {"kind": "bot", "bot_id": None, "name": "exact", "deadline_ms": 2000}

    async def decide(self, payload: dict) -> BotReply:
        return BotReply(payload["legal_actions"][0], None, "", 3.0)

    async def aclose(self) -> None:
        """Nothing to release."""


def _node_round_trip(base_url: str, sources: list[str]) -> list[dict]:
    node = shutil.which("node")
    assert node, "node is missing: run scripts/install"
    done = subprocess.run([node, str(NODE_ROUND_TRIP), base_url, *sources],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_replay_parsed_and_rewritten_by_javascript_verifies(api, app_url, bot_server,
                                                              run_worker, tmp_path):
    """Node.js fetches a finished replay from the server (a drawn seed), JSON.parses it,
    JSON.stringifies it and posts it to /replays/verify: valid. Likewise a record whose
    elapsed_ms are 3.0, which JavaScript writes 3."""
    bot = api.register_bot(bot_server.url("/random"))
    match = api.create_match("caravans", [{"kind": "bot", "bot_id": bot}] * 2)
    run_worker()
    assert api.get(f"/matches/{match['id']}").get_json()["status"] == "finished"
    record = run_match("aladino", MAX_SAFE_INTEGER, {}, [ThreeMillisecondSeat()] * 2,
                       FailurePolicy(), "m-three-ms", sealer=sealer_of_tests())
    exact = tmp_path / "exact.json"
    exact.write_bytes(orjson.dumps(record))
    assert b'"elapsed_ms":3.0' in exact.read_bytes()

    fetched, rewritten = _node_round_trip(
        app_url, [f"api:/matches/{match['id']}/replay", str(exact)])

    assert fetched["source"].endswith("/replay") and fetched["seed"] == str(match["seed"])
    for outcome in (fetched, rewritten):
        report = outcome["report"]
        assert report["valid"] and report["signature"] == "valid", outcome
        assert report["chain"] == "valid" and report["problem"] is None
    assert rewritten["rewritten_has"]['"elapsed_ms":3,'] is True
    assert record["format"] == replay.FORMAT


def test_a_referee_replay_1_record_with_a_larger_seed_is_still_verified(api):
    """Old records may carry seeds up to 2**63 - 1: POST /replays/verify re-runs them (the
    committed record is signed with a key this server does not have)."""
    record = orjson.loads(V1_RECORD.read_bytes())
    assert record["seed"] > MAX_SAFE_INTEGER
    report = api.post("/replays/verify", json=record).get_json()
    assert report["problem"] is None and report["chain"] == "valid"
    assert report["steps_checked"] == len(record["steps"])
    assert report["signature"] == "unknown-key" and not report["valid"]
