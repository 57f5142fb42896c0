"""The API test kit: the common test settings (`ADMIN`, `SECRET`: the `config` fixture of
tests/conftest.py is made of them), the spec-checking API client, worker commands, waits
for a tournament, matches driven or stored in this process, and the states of a recorded
match re-run from its seed and actions."""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path

import jsonschema
import redis.asyncio as aioredis
import yaml
from openapi_core import Config as OpenAPIConfig
from openapi_core import OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse

import engines
from referee.config import Config
from referee.match.sealing import Sealer, Verifier, append_new_key
from tournament import driver
from tournament.store import Store
from tournament.store.progress import Progress

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = Path(__file__).resolve().parent  # tests/support: programs and data files
SPEC_PATH = ROOT / "openapi.yaml"
ADMIN = "admin-token-for-tests"
SECRET = "test-secret"
# A `referee-replay/1` record written by an earlier version (a seed above 2**53), and the
# key it was signed with.
V1_RECORD = SUPPORT / "data" / "replay-v1-aladino.json"
V1_SECRET = "v1-fixture-secret"
# A `referee-replay/2` record (every step's state hash signed), written before format 3.
V2_RECORD = SUPPORT / "data" / "replay-v2-caravans.json"
V2_SECRET = "v2-fixture-secret"


@cache
def signing_key_file() -> Path:
    """This test process's Ed25519 key file (one key), made once in a temporary folder that
    goes with the process: what `config` and every `referee serve`/`worker` the tests start
    sign with (tests/conftest.py puts it in REFEREE_SIGNING_KEY_FILE)."""
    folder = Path(tempfile.mkdtemp(prefix="referee-test-keys-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "signing-keys.pem"
    append_new_key(path)
    return path


@cache
def sealer_of_tests() -> Sealer:
    """The sealer of `signing_key_file` (with `SECRET` for HMAC records)."""
    return Sealer.from_key_file(signing_key_file(), SECRET)


def verifier_of_tests() -> Verifier:
    """What checks the records the tests' servers write: the test key's public half and
    `SECRET`."""
    return Verifier.of([key.public_raw for key in sealer_of_tests().keys], [SECRET])


def common_config(redis_url: str, **overrides) -> Config:
    """The common test settings: `ADMIN`, `SECRET` and `Config`'s defaults for everything
    else (bot hosts: loopback only, the body limit, the move rate...), on `redis_url`, with
    `overrides` applied. The `config` fixture is made of it; so is a module's own server
    that a function-scoped fixture cannot give (tests/web's)."""
    return replace(Config(redis_url=redis_url, admin_token=ADMIN, secret=SECRET,
                          signing_key_file=str(signing_key_file())), **overrides)


def load_openapi() -> OpenAPI:
    """openapi.yaml, with problem+json bodies read as JSON."""
    problem_json = {"application/problem+json": json.loads}
    return OpenAPI.from_file_path(
        str(SPEC_PATH), config=OpenAPIConfig(extra_media_type_deserializers=problem_json))


@cache
def spec() -> dict:
    """openapi.yaml, parsed once per run."""
    return yaml.safe_load(SPEC_PATH.read_text())


def problem_schema() -> dict:
    """The spec's Problem schema with the components it refers to."""
    return {**spec()["components"]["schemas"]["Problem"], "components": spec()["components"]}


def check_event_stream(path: str, body: bytes) -> None:
    """Each event of a whole Server-Sent Events stream against the per-event schema of the
    operation (as schemathesis reads a 3.1 `schema`, as 3.2's `itemSchema`), and its JSON
    data against its event's `contentSchema`."""
    item = next(item for template, item in spec()["paths"].items()
                if re.fullmatch(re.sub(r"\{[^{}]+\}", "[^/]+", template), path))
    schema = item["get"]["responses"]["200"]["content"]["text/event-stream"]["schema"]
    components = {"components": spec()["components"]}
    for block in body.decode().split("\n\n"):
        fields = [line.split(": ", 1) for line in block.splitlines()
                  if line and not line.startswith(":")]
        event = {key: value for key, value in fields if key in ("event", "id", "data")}
        if "data" not in event:
            continue
        jsonschema.validate(event, {**schema, **components})
        data = next(branch["properties"]["data"]["contentSchema"] for branch in schema["oneOf"]
                    if branch["properties"]["event"]["const"] == event["event"])
        jsonschema.validate(json.loads(event["data"]), {**data, **components})


class _SentRequest(WerkzeugOpenAPIRequest):
    """The request as sent; its body is not read back (the app may not have read it)."""

    @property
    def body(self) -> bytes:
        return b""


class ApiClient:
    """The Flask test client; every response is validated against openapi.yaml."""

    def __init__(self, app, openapi: OpenAPI):
        self.app = app
        self.client = app.test_client()
        self.openapi = openapi

    def request(self, method: str, path: str, *, token: str | None = None, **kwargs):
        headers = dict(kwargs.pop("headers", {}))
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        response = self.client.open(path, method=method, headers=headers, **kwargs)
        self.check(response)
        return response

    def get(self, path: str, **kwargs):
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs):
        return self.request("POST", path, **kwargs)

    def register_bot(self, url: str, games: list[str] | None = None, name: str = "bot") -> str:
        response = self.post("/bots", token=ADMIN,
                             json={"name": name, "url": url, "games": games or engines.names()})
        assert response.status_code == 201, response.get_json()
        return response.get_json()["id"]

    def create_match(self, game: str, seats: list[dict], **fields) -> dict:
        response = self.post("/matches", token=ADMIN,
                             json={"game": game, "seats": seats, **fields})
        assert response.status_code == 201, response.get_json()
        return response.get_json()

    def check(self, response) -> None:
        """Against the spec's operation when the route is described (an event stream
        event by event); a problem body against the Problem schema otherwise (unknown
        paths, wrong methods)."""
        if response.status_code >= 400:
            assert response.mimetype == "application/problem+json", response.data
        if response.mimetype == "text/event-stream":
            check_event_stream(response.request.path, response.get_data())
            return
        try:
            self.openapi.validate_response(_SentRequest(response.request),
                                           WerkzeugOpenAPIResponse(response))
        except Exception as error:
            if response.status_code not in (404, 405) or "not found" not in str(error).lower():
                raise
            jsonschema.validate(response.get_json(), problem_schema())


def two_player_options(game: str) -> dict:
    """The options of the game's first two-player variant."""
    return next(v for v in engines.get(game).variants() if v["num_players"] == 2)["options"]


def replay_states(record: dict) -> list[dict]:
    """The state before each step, and the final one, recomputed from seed + recorded
    actions (a forfeited step, with no action, leaves the state as it was)."""
    engine = engines.get(record["game"])
    state = engine.new_game(record["num_players"], record["seed"], record["options"])
    states = [state]
    for step in record["steps"]:
        if step["action"] is not None:
            state = engine.apply(state, step["action"])
        states.append(state)
    return states


def worker_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "referee.cli", "worker", *extra]


def worker_env(redis_url: str) -> dict:
    return {**os.environ, "REDIS_URL": redis_url, "REFEREE_SECRET": SECRET,
            "PYTHONPATH": str(ROOT)}


def a_worker_plays(api: ApiClient, run_worker: Callable[..., str], bot_url: str,
                   seed: int) -> dict:
    """A two-seat Aladino match of the bot at `bot_url` against itself, played to its end by
    `referee worker --burst` (the `run_worker` fixture); its replay, once the match is
    finished with as many steps as the replay holds."""
    bot = api.register_bot(bot_url, name=f"bot {seed}")
    match = api.create_match("aladino", [{"kind": "bot", "bot_id": bot}] * 2, seed=seed)
    run_worker(60)
    status = api.get(f"/matches/{match['id']}").get_json()
    assert status["status"] == "finished" and status["step"] > 0, status
    record = api.get(f"/matches/{match['id']}/replay").get_json()
    assert len(record["steps"]) == status["step"]
    return record


def wait_finished(api: ApiClient, tournament_id: str, timeout: float = 60) -> dict:
    """Poll the tournament (as `referee tournament` does) until it is over."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view = api.get(f"/tournaments/{tournament_id}").get_json()
        if view["status"] == "finished":
            return view
        time.sleep(0.2)
    raise AssertionError(f"tournament {tournament_id} unfinished after {timeout}s: "
                         f"{view['progress']}")


def store_finished(redis_url: str, match_id: str, record: dict, kept: bytes | None = None
                   ) -> None:
    """Store a sealed record as the finished match `match_id` (created before), the way a
    driver does: under the match's lease, through `tournament.store.progress` (with the
    driver's `kept` decisions, when given)."""

    async def finish() -> None:
        client = aioredis.Redis.from_url(redis_url)
        progress = Progress(client)
        try:
            assert await progress.take_lease(match_id, "test-driver")
            await progress.start(match_id, record["game"], "test-driver", record["started_at"])
            await progress.finish(match_id, "test-driver", record, len(record["seats"]),
                                  kept=(kept, 3600))
        finally:
            await client.aclose()

    asyncio.run(finish())


def drive_match(redis_url: str, match_id: str, secret: str = "", keep_decisions_s: int = 0
                ) -> dict:
    """One match job's work, in this thread: drive the stored match as far as it goes
    (`tournament.driver`, on a fresh event loop); its summary."""

    async def run() -> dict:
        client = aioredis.Redis.from_url(redis_url)
        try:
            config = Config(redis_url=redis_url, secret=secret,
                            signing_key_file=str(signing_key_file()),
                            keep_decisions_s=keep_decisions_s)
            context = driver.Context(Progress(client), Store.from_url(redis_url), config,
                                     config.sealer())
            return await driver.drive(context, match_id)
        finally:
            await client.aclose()

    return asyncio.run(run())
