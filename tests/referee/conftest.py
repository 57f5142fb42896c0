"""Fixtures of the referee tests: test bots on loopback, the API with every response checked
against openapi.yaml, and real `referee worker` processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from botserver import BotServer
from openapi_core import Config as OpenAPIConfig
from openapi_core import OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse

import engines
from referee.app import create_app
from referee.config import Config
from referee.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]
SPEC_PATH = ROOT / "openapi.yaml"
ADMIN = "admin-token-for-tests"
SECRET = "test-secret"


@pytest.fixture(scope="session")
def bot_server():
    server = BotServer().start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def refused_url() -> str:
    """A loopback URL where nothing listens: connection refused."""
    return f"http://127.0.0.1:{free_port()}/bot"


@pytest.fixture(scope="session")
def openapi() -> OpenAPI:
    problem_json = {"application/problem+json": json.loads}
    return OpenAPI.from_file_path(
        str(SPEC_PATH), config=OpenAPIConfig(extra_media_type_deserializers=problem_json))


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
        spec = yaml.safe_load(SPEC_PATH.read_text())
        self.problem_schema = {**spec["components"]["schemas"]["Problem"],
                               "components": spec["components"]}
        self.checked = 0

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
        """Against the spec's operation when the route is described; a problem body
        against the Problem schema otherwise (unknown paths, wrong methods)."""
        if response.status_code >= 400:
            assert response.mimetype == "application/problem+json", response.data
        try:
            self.openapi.validate_response(_SentRequest(response.request),
                                           WerkzeugOpenAPIResponse(response))
        except Exception as error:
            if response.status_code not in (404, 405) or "not found" not in str(error).lower():
                raise
            jsonschema.validate(response.get_json(), self.problem_schema)
        self.checked += 1


@pytest.fixture
def config(redis_url) -> Config:
    return Config(redis_url=redis_url, admin_token=ADMIN, secret=SECRET,
                  max_body_bytes=64 * 1024, move_wait_s=5.0)


@pytest.fixture
def api(config, openapi) -> ApiClient:
    return ApiClient(create_app(config), openapi)


def worker_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "referee.cli", "worker", *extra]


def worker_env(redis_url: str) -> dict:
    return {**os.environ, "REDIS_URL": redis_url, "REFEREE_SECRET": SECRET,
            "PYTHONPATH": str(ROOT)}


@pytest.fixture
def run_worker(redis_url):
    """Run `referee worker --burst` to the end of the queue; returns its output."""

    def run(timeout: float = 60) -> str:
        done = subprocess.run(worker_command("--burst"), env=worker_env(redis_url), cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, done.stderr
        return done.stdout + done.stderr

    return run


@pytest.fixture
def background_worker(redis_url):
    """Start `referee worker --burst` in the background; stopped at the end of the test."""
    procs: list[subprocess.Popen] = []

    def start() -> subprocess.Popen:
        proc = subprocess.Popen(worker_command("--burst"), env=worker_env(redis_url), cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:  # a failed test left it waiting: stop it and its work horse
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
