"""Fixtures of the browser tests: the real app on a loopback port against the real Redis,
example bots over HTTP, matches played by a real `referee worker`, and headless Chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis
import requests
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from werkzeug.serving import make_server

from bots.python import aladino_bot, aldabas_bot, caravans_bot, random_bot
from bots.python.sdk import make_server as make_bot_server
from referee.api.app import create_app
from tests.support.apitest import ADMIN, common_config
from tests.support.botserver import BotServer
from tests.support.loopback import serving

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--window-size=1400,1000", "--hide-scrollbars")
GREEDY = {"aladino": aladino_bot, "aldabas": aldabas_bot, "caravans": caravans_bot}
PLAYERS = 3
SEED = 11


@dataclass
class Site:
    """The referee serving the pages, and what the tests recorded in it."""

    url: str
    matches: dict[str, str] = field(default_factory=dict)  # game -> match id
    tournaments: dict[str, str] = field(default_factory=dict)  # game -> tournament id
    bots: dict[str, str] = field(default_factory=dict)  # name -> bot id
    drawn_seed_match: str = ""  # a match created without a seed: the server drew it
    clocked_match: str = ""  # on a clock, seat 0 a bot that says what it thinks (debug, info)
    redis_url: str = ""

    def run_worker(self) -> str:
        return run_worker(self.redis_url)

    def api(self, path: str) -> dict:
        response = requests.get(self.url + path, timeout=10)
        response.raise_for_status()
        return response.json()

    def admin_api(self, path: str) -> dict:
        """GET as the admin (a replay while its match runs)."""
        response = requests.get(self.url + path, timeout=10,
                                headers={"Authorization": f"Bearer {ADMIN}"})
        response.raise_for_status()
        return response.json()

    def post(self, path: str, body: dict) -> dict:
        response = requests.post(self.url + path, json=body, timeout=10,
                                 headers={"Authorization": f"Bearer {ADMIN}"})
        assert response.status_code == 201, response.text
        return response.json()


def run_worker(redis_url: str) -> str:
    """`referee worker --burst`: plays every queued match, then stops; its log."""
    env = {**os.environ, "REDIS_URL": redis_url, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "referee.cli", "worker", "--burst"], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def register_bots(site: Site, bot_urls: dict[str, str]) -> dict[str, str]:
    """Name -> bot id; the greedy bots play their own game, the random ones every game."""
    return {name: site.post("/bots", {"name": name, "url": url, "games": [name.split("-")[1]]
                                      if name.startswith("greedy-") else list(GREEDY)})["id"]
            for name, url in bot_urls.items()}


def record_matches(site: Site, bot_urls: dict[str, str]) -> None:
    """In each game, a greedy bot against random bots, and a small round-robin tournament
    of the greedy bot and two random bots; all played by a real worker."""
    bots = site.bots = register_bots(site, bot_urls)
    for game in GREEDY:
        seats = [{"kind": "bot", "bot_id": bots[f"greedy-{game}"]}]
        seats += [{"kind": "bot", "bot_id": bots["random-1"]} for _ in range(1, PLAYERS)]
        site.matches[game] = site.post("/matches", {"game": game, "seats": seats,
                                                    "seed": SEED})["id"]
        entrants = [bots[f"greedy-{game}"], bots["random-1"], bots["random-2"]]
        site.tournaments[game] = site.post("/tournaments", {
            "game": game, "bots": entrants, "players": 2, "rounds": 1, "seed": SEED})["id"]
    site.drawn_seed_match = site.post("/matches", {"game": "aladino", "seats": [
        {"kind": "bot", "bot_id": bots["random-1"]}, {"kind": "bot", "bot_id": bots["random-2"]}]
    })["id"]
    chatty = bots["chatty"]
    site.clocked_match = site.post("/matches", {
        "game": "aladino", "seed": SEED, "time_control": {"base_ms": 60000, "increment_ms": 500},
        "seats": [{"kind": "bot", "bot_id": chatty},
                  {"kind": "bot", "bot_id": bots["random-1"]}]})["id"]
    log = site.run_worker()
    for game, match_id in [*site.matches.items(), ("aladino", site.drawn_seed_match),
                           ("aladino", site.clocked_match)]:
        status = site.api(f"/matches/{match_id}")["status"]
        assert status == "finished", f"{game} match {match_id} is {status}: {log[-4000:]}"
    for game, tournament_id in site.tournaments.items():
        view = site.api(f"/tournaments/{tournament_id}")
        assert view["status"] == "finished", (
            f"{game} tournament {tournament_id}: {view['progress']}: {log[-6000:]}")


@pytest.fixture(scope="module")
def site(redis_server) -> Iterator[Site]:
    """The app (every blueprint, as `referee serve` builds it) with one finished match per
    game, played by the example bots over HTTP."""
    client = redis.Redis.from_url(redis_server)
    client.flushall()
    client.close()
    app_server = make_server("127.0.0.1", 0, create_app(common_config(redis_server)),
                             threaded=True)
    choosers = {"random-1": random_bot.make_choose(seed=1),
                "random-2": random_bot.make_choose(seed=2)}
    choosers.update({f"greedy-{game}": module.make_choose(seed=2)
                     for game, module in GREEDY.items()})
    bot_servers = {name: make_bot_server(choose, port=0) for name, choose in choosers.items()}
    with ExitStack() as stack:
        stack.enter_context(serving(app_server))
        for server in bot_servers.values():
            stack.enter_context(serving(server))
        site = Site(url=f"http://127.0.0.1:{app_server.server_port}", redis_url=redis_server)
        urls = {name: f"http://127.0.0.1:{server.server_address[1]}/"
                for name, server in bot_servers.items()}
        test_bots = BotServer().start()
        stack.callback(test_bots.server_close)
        stack.callback(test_bots.shutdown)
        urls["chatty"] = test_bots.url("/chatty")
        record_matches(site, urls)
        yield site


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    """Where the tests save their screenshots: $REFEREE_SCREENSHOTS, or a temporary folder."""
    chosen = os.environ.get("REFEREE_SCREENSHOTS")
    return Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    """Debian's headless Chromium driven through its chromedriver (never a downloaded one)."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not shutil.which(path):
            pytest.fail(f"{path} is missing: run scripts/install (Debian's chromium and "
                        "chromium-driver packages)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in CHROMIUM_ARGS:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
