"""The ladder and bot pages (issue 28) in headless Chromium against the real app, Redis,
`referee worker` processes and bots of known strength over HTTP (tests/support/ladder_bots.py):
a 2-player ladder of three bots and one that fails its entry check, played a few matches at
a time (unpaused, then paused again once enough are counted), so each test runs in any order.
Screenshots of the ladder and bot pages go where test_web_pages.py puts its own."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis
import requests
from selenium.webdriver.common.by import By
from werkzeug.serving import make_server

from referee.api.app import create_app
from tests.support.apitest import ADMIN, common_config
from tests.support.ladder_bots import LadderBots
from tests.support.loopback import serving
from tests.support.workers import Workers
from tests.web.test_web_pages import (
    count,
    page_errors,
    save_screenshot,
    text,
    to_fixed,
    wait_for,
)

PLAY_S = 300  # a few matches on a loaded machine
STRENGTHS = {"p2": "/p/2", "p5": "/p/5", "p7": "/p/7"}


@dataclass
class Arena:
    """The app serving the pages, its ladder and the bots entered."""

    url: str
    farm: LadderBots
    ladder_id: str = ""
    bots: dict[str, str] = field(default_factory=dict)  # name -> bot id

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        response = requests.request(method, self.url + path, json=body, timeout=10,
                                    headers={"Authorization": f"Bearer {ADMIN}"})
        assert response.ok, response.text
        return response.json()

    def api(self, path: str) -> dict:
        return self.call("GET", path)

    def ladder(self) -> dict:
        return self.api(f"/ladders/{self.ladder_id}")

    def entries(self) -> dict[str, dict]:
        listed = self.api(f"/ladders/{self.ladder_id}/entries?limit=200")["entries"]
        return {entry["name"]: entry for entry in listed}

    def pause(self, paused: bool) -> None:
        self.call("PATCH", f"/ladders/{self.ladder_id}", {"paused": paused})

    def play_until(self, check: Callable[[], object], what: str) -> dict:
        """Unpause until `check()` holds, pause, and wait for the matches under way; the
        ladder then."""
        self.pause(False)
        poll(check, what)
        self.pause(True)
        return poll(lambda: (view := self.ladder())["running"] == 0 and view,
                    "the matches under way")

    def play(self, matches: int) -> dict:
        before = self.ladder()["counted"]
        return self.play_until(lambda: self.ladder()["counted"] >= before + matches,
                               f"{matches} more matches")


def poll(check: Callable[[], Any], what: str, timeout: float = PLAY_S) -> Any:
    """Until `check()` answers something true (generous: a loaded machine)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if answer := check():
            return answer
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def arena(redis_server, tmp_path_factory) -> Iterator[Arena]:
    """A paused ladder (so nothing is played until a test says so) with its entries checked
    by two waiting workers: three bots active, /garbage rejected."""
    client = redis.Redis.from_url(redis_server)
    client.flushall()
    client.close()
    app_server = make_server("127.0.0.1", 0, create_app(common_config(redis_server)),
                             threaded=True)
    farm = LadderBots().start()
    workers = Workers(redis_server, tmp_path_factory.mktemp("workers"))
    with serving(app_server) as port:
        try:
            arena = Arena(url=f"http://127.0.0.1:{port}", farm=farm)
            for name, path in {**STRENGTHS, "garbage": "/garbage"}.items():
                arena.bots[name] = arena.call("POST", "/bots", {
                    "name": name, "url": farm.url(path), "games": ["aladino"]})["id"]
            arena.ladder_id = arena.call("POST", "/ladders", {
                "name": "web ladder", "game": "aladino", "players": 2, "concurrency": 2,
                "seed": 11, "deadline_ms": 20000})["id"]
            arena.pause(True)
            for bot in arena.bots.values():
                arena.call("POST", f"/ladders/{arena.ladder_id}/entries", {"bot": bot})
            workers.start_ready(2)
            poll(lambda: all(e["status"] != "checking" for e in arena.entries().values()),
                 "the entry checks")
            yield arena
        finally:
            workers.stop_all()
            farm.shutdown()
            farm.server_close()


def counted_shown(browser) -> int:
    return int(text(browser, "ladder-counted").split()[0])


def table_rows(browser, css: str) -> list[list[str]]:
    rows = browser.find_elements(By.CSS_SELECTOR, f"{css} tbody tr")
    return [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in rows]


def standings_shown(browser) -> list[list[str]]:
    """Name, version, μ ± σ, ordinal and matches of each row."""
    return [row[1:6] for row in table_rows(browser, "#standings-table")]


def standings_expected(view: dict) -> list[list[str]]:
    return [[row["name"], str(row["version"]),
             f"{to_fixed(row['mu'], 2)} ± {to_fixed(row['sigma'], 2)}",
             to_fixed(row["ordinal"], 2), str(row["matches"])] for row in view["standings"]]


def test_the_ladder_page_follows_the_standings_and_plots_the_leaders(arena, browser,
                                                                     screenshots):
    browser.get(f"{arena.url}/ui/ladders/{arena.ladder_id}")
    start = arena.ladder()["counted"]
    wait_for(browser, lambda: counted_shown(browser) == start, "the counted matches")
    browser.execute_script("window.notReloaded = true")
    assert text(browser, "ladder-status") == "paused"
    wait_for(browser, lambda: count(browser, "#entries-table tbody tr") == 1, "one entry out")
    rejected = table_rows(browser, "#entries-table")[0]
    assert rejected[:2] == ["garbage", "rejected"] and "malformed" in rejected[4]

    arena.pause(False)
    wait_for(browser, lambda: counted_shown(browser) >= start + 6, "the page to follow the "
             "ladder to 6 more matches counted", PLAY_S)
    arena.pause(True)
    view = poll(lambda: (got := arena.ladder())["running"] == 0 and got, "the matches under way")
    wait_for(browser, lambda: counted_shown(browser) == view["counted"]
             and text(browser, "ladder-status") == "paused", "the page to show the last count")
    assert browser.execute_script("return window.notReloaded") is True

    active = [row for row in view["standings"] if row["status"] == "active"]
    assert len(active) == len(STRENGTHS)
    assert [row["ordinal"] for row in view["standings"]] == sorted(
        (row["ordinal"] for row in view["standings"]), reverse=True)
    wait_for(browser, lambda: standings_shown(browser) == standings_expected(view),
             "the standings as the API has them")
    leaders = [row["bot"] for row in view["standings"][:5] if row["matches"]]
    wait_for(browser, lambda: [e.get_attribute("data-bot") for e in browser.find_elements(
        By.CSS_SELECTOR, "#ladder-plot path.series")] == leaders, "a line per leader")
    history = arena.api(f"/ladders/{arena.ladder_id}/history")["points"]
    assert max(n for n, _, _ in history) == view["counted"]
    links = {e.get_attribute("href") for e in browser.find_elements(By.CSS_SELECTOR,
                                                                     "#standings-table a")}
    assert links == {f"{arena.url}/ui/bots/{arena.bots[name]}" for name in STRENGTHS}
    recent = arena.api(f"/ladders/{arena.ladder_id}/matches?limit=20")["matches"]
    wait_for(browser, lambda: [row[0] for row in table_rows(browser, "#matches table")]
             == [match["id"] for match in recent], "the recent matches")
    assert page_errors(browser) == []
    save_screenshot(browser, screenshots / "ladder.png")


def test_a_bot_page_shows_its_versions_and_rating_history(arena, browser, screenshots):
    """p7 plays a few matches as version 1, then as version 2 once that passed its check."""
    bot = arena.bots["p7"]
    arena.play_until(lambda: arena.entries()["p7"]["matches"] >= 2, "matches of version 1")
    arena.call("PATCH", f"/bots/{bot}", {"url": arena.farm.url("/p/6")})
    poll(lambda: arena.entries()["p7"]["version"] == 2, "version 2 in play")
    arena.play_until(lambda: arena.entries()["p7"]["version_matches"] >= 2,
                     "matches of version 2")
    history = arena.api(f"/ratings/aladino/history?bot={bot}&limit=1000")
    row = next(e for e in arena.api("/ratings/aladino")["leaderboard"] if e["bot_id"] == bot)
    assert {point[2] for point in history["history"]} == {1, 2}

    browser.get(f"{arena.url}/ui/bots/{bot}")
    wait_for(browser, lambda: count(browser, "#versions-table tbody tr") == 2, "two versions")
    assert [row[0] for row in table_rows(browser, "#versions-table")] == ["1", "2"]
    assert text(browser, "bot-version") == "2"
    assert text(browser, "bot-public") == "public"
    plot = "#rating-plot-aladino"
    wait_for(browser, lambda: count(browser, f"{plot} path.series") == 1, "the rating plot")
    assert count(browser, f"{plot} circle") == history["total"]
    assert [e.text for e in browser.find_elements(By.CSS_SELECTOR, f"{plot} .mark-label")] == [
        "v2"]
    facts = browser.find_element(By.CSS_SELECTOR, '.game-ratings[data-game="aladino"]')
    assert facts.find_element(By.CSS_SELECTOR, ".elo").text == to_fixed(row['rating'], 0)
    assert facts.find_element(By.CSS_SELECTOR, ".mu-sigma").text == (
        f"{to_fixed(row['mu'], 2)} ± {to_fixed(row['sigma'], 2)}")
    assert page_errors(browser) == []
    save_screenshot(browser, screenshots / "bot.png")


def test_the_ladders_are_listed_and_the_leaderboard_links_to_bot_pages(arena, browser):
    browser.get(f"{arena.url}/ui/")
    wait_for(browser, lambda: count(browser, "#ladders table.ladders tbody tr") == 1, "the ladder")
    browser.find_element(By.LINK_TEXT, "ladders").click()
    wait_for(browser, lambda: count(browser, "#ladders table.ladders tbody tr") == 1,
             "the ladders page")
    browser.find_element(By.LINK_TEXT, "web ladder").click()
    wait_for(browser, lambda: text(browser, "title") == "Ladder web ladder", "the ladder page")
    arena.play(1)
    browser.get(f"{arena.url}/ui/games/aladino")
    wait_for(browser, lambda: count(browser, "#leaderboard-table tbody tr a") >= 2,
             "the rated bots")
    links = [e.get_attribute("href") for e in browser.find_elements(
        By.CSS_SELECTOR, "#leaderboard-table tbody tr a")]
    assert all(link.startswith(f"{arena.url}/ui/bots/") for link in links)
    assert page_errors(browser) == []
