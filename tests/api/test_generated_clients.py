"""Clients generated from openapi.yaml work: openapi-generator (Python) and
openapi-python-client each generate one (offline, both at once), which registers bots,
starts a match and a tournament against the API served on loopback, and reads them back."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.apitest import ADMIN, SPEC_PATH

BIN = Path(sys.executable).parent
GAME = "aladino"
BOT_URL = "http://127.0.0.1:9/bot"  # never called: no worker plays the matches here
PACKAGES = ("referee_og", "referee_opc")


@pytest.fixture(scope="module")
def clients(tmp_path_factory) -> Iterator[dict[str, ModuleType]]:
    """Both generated packages, imported: {"openapi_generator": ..., "python_client": ...}."""
    assert shutil.which("java"), "java is missing (openapi-generator runs on it): scripts/install"
    out = tmp_path_factory.mktemp("clients")
    commands = {
        "openapi_generator": [
            str(BIN / "openapi-generator-cli"), "generate", "-i", str(SPEC_PATH), "-g", "python",
            "-o", str(out / "og"), "--package-name", "referee_og",
            "--global-property", "apiTests=false,modelTests=false,apiDocs=false,modelDocs=false"],
        "python_client": [
            str(BIN / "openapi-python-client"), "generate", "--path", str(SPEC_PATH),
            "--output-path", str(out / "referee_opc"), "--meta", "none"],
    }
    running = {name: subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True) for name, command in commands.items()}
    logs = {name: process.communicate(timeout=120)[0] for name, process in running.items()}
    for name, process in running.items():
        assert process.returncode == 0, logs[name]
    assert "Empty operationId" not in logs["openapi_generator"], logs["openapi_generator"]
    assert "Unable to process schema" not in logs["python_client"], logs["python_client"]
    sys.path[:0] = [str(out / "og"), str(out)]
    try:
        yield {"openapi_generator": importlib.import_module("referee_og"),
               "python_client": importlib.import_module("referee_opc")}
    finally:
        del sys.path[:2]
        for name in [name for name in sys.modules if name.startswith(PACKAGES)]:
            del sys.modules[name]


def test_openapi_generator_client_creates_a_match_and_a_tournament(clients, app_url):
    og = clients["openapi_generator"]
    with og.ApiClient(og.Configuration(host=app_url, access_token=ADMIN)) as client:
        bots = og.BotsApi(client)
        ids = [bots.create_bot(og.BotCreate(name=f"og-{n}", url=BOT_URL, games=[GAME])).id
               for n in range(2)]
        match = og.MatchesApi(client).create_match(og.MatchCreate(
            game=GAME, seats=[og.SeatSpec(kind="bot", bot_id=ids[0]), og.SeatSpec(kind="pull")],
            seed=7))
        assert (match.status, match.seed, len(match.tokens)) == ("queued", 7, 1)
        assert og.MatchesApi(client).get_match(match.id).seats[1].kind == "pull"
        tournaments = og.TournamentsApi(client)
        tournament = tournaments.create_tournament(og.TournamentCreate(game=GAME, bots=ids))
        assert tournament.progress.total == 2
        assert tournaments.get_tournament(tournament.id).bots[0].bot_id == ids[0]


def test_openapi_python_client_creates_a_match_and_a_tournament(clients, app_url):
    opc = clients["python_client"]
    api = {name: importlib.import_module(f"referee_opc.api.{group}.{name}")
           for group, name in [("bots", "create_bot"), ("matches", "create_match"),
                               ("matches", "get_match"), ("tournaments", "create_tournament"),
                               ("tournaments", "get_tournament")]}
    models = opc.models
    client = opc.AuthenticatedClient(base_url=app_url, token=ADMIN)
    ids = [api["create_bot"].sync(client=client, body=models.BotCreate(
        name=f"opc-{n}", url=BOT_URL, games=[models.BotCreateGamesItem(GAME)])).id
        for n in range(2)]
    match = api["create_match"].sync(client=client, body=models.MatchCreate(
        game=models.MatchCreateGame(GAME), seed=7,
        seats=[models.SeatSpec(kind=models.SeatSpecKind.BOT, bot_id=ids[0]),
               models.SeatSpec(kind=models.SeatSpecKind.PULL)]))
    assert isinstance(match, models.MatchCreated), match
    assert (match.status, match.seed, len(match.tokens)) == ("queued", 7, 1)
    assert api["get_match"].sync(match.id, client=client).seats[1].kind == "pull"
    tournament = api["create_tournament"].sync(client=client, body=models.TournamentCreate(
        game=models.TournamentCreateGame(GAME), bots=ids))
    assert isinstance(tournament, models.Tournament), tournament
    assert tournament.progress.total == 2
    assert api["get_tournament"].sync(tournament.id, client=client).bots[0].bot_id == ids[0]
