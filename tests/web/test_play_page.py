"""A person in Chromium against `referee serve` (gunicorn) and a real `referee worker`:
plays a whole Aladino match by clicking on the board against the random bot (the recorded
replay verifies), and watches a match live in the viewer while it is played."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator

import pytest
import requests
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from bots.python import random_bot
from bots.python.sdk import make_server
from tests.support.apitest import ADMIN
from tests.support.loopback import serving

GAME = "aladino"
WAIT_S = 30
AUTH = {"Authorization": f"Bearer {ADMIN}"}


@pytest.fixture(scope="module")
def bot_url() -> Iterator[str]:
    with serving(make_server(random_bot.make_choose(seed=3), port=0)) as port:
        yield f"http://127.0.0.1:{port}/"


def post(server, path: str, body: dict) -> dict:
    response = requests.post(server.url + path, json=body, headers=AUTH, timeout=10)
    assert response.status_code in (200, 201), response.text
    return response.json()


def person_against_bot(server, bot_url: str, seed: int) -> tuple[str, str]:
    """An Aladino match: seat 0 a pull seat for the person, seat 1 the random bot."""
    bot = post(server, "/bots", {"name": f"random-{seed}", "url": bot_url, "games": [GAME]})
    match = post(server, "/matches", {"game": GAME, "seed": seed, "pull_deadline_ms": 600000,
                                      "seats": [{"kind": "pull", "name": "you"},
                                                {"kind": "bot", "bot_id": bot["id"]}]})
    return match["id"], match["tokens"][0]["token"]


def board(browser, attribute: str) -> str | None:
    return browser.find_element(By.ID, "board").get_attribute(attribute)


def wait_for(browser, condition, what: str):
    """Until `condition()` holds; a page redrawn meanwhile (a stale element) is asked again."""
    return WebDriverWait(browser, WAIT_S, ignored_exceptions=(StaleElementReferenceException,)
                         ).until(lambda _: condition(), message=what)


def log_title(browser) -> str:
    """The viewer's events panel heading: "Events (<entries in the log>)"."""
    return browser.find_element(By.CSS_SELECTOR, "#board .log h3").text


def page_errors(browser) -> list[str]:
    return [entry["message"] for entry in browser.get_log("browser")
            if entry["level"] == "SEVERE" and "favicon.ico" not in entry["message"]]


def test_a_person_plays_a_whole_aladino_match_by_clicking(live_server, redis_url, workers, browser,
                                                         bot_url):
    workers.start_ready(1)
    match_id, token = person_against_bot(live_server, bot_url, seed=21)
    browser.get(f"{live_server.url}/ui/play/{match_id}#token={token}")
    rng = random.Random(21)
    clicks = 0
    while True:
        wait_for(browser, lambda: board(browser, "data-turn") in ("mine", "over"),
                 "the person's turn or the end")
        if board(browser, "data-turn") == "over":
            break
        step = board(browser, "data-step")
        targets = browser.find_elements(By.CSS_SELECTOR, "#board .target")
        assert targets, "every Aladino decision is made on the board"
        assert len(targets) == len(browser.find_elements(By.CSS_SELECTOR, "#choices .choice"))
        rng.choice(targets).click()
        clicks += 1
        wait_for(browser, lambda step=step: board(browser, "data-step") != step,
                 "the move to be played")
    assert browser.find_element(By.ID, "result").text.startswith("The match is over.")

    record = requests.get(f"{live_server.url}/matches/{match_id}/replay", timeout=10).json()
    report = requests.post(f"{live_server.url}/replays/verify", json=record, timeout=30).json()
    assert report["valid"], report
    mine = [step for step in record["steps"] if step["seat"] == 0]
    assert len(mine) == clicks and all(step["fault"] is None for step in mine)
    shown = browser.find_elements(By.CSS_SELECTOR, "#moves li")
    assert len(shown) == len(record["steps"])  # every move, the bot's too, as it came
    assert page_errors(browser) == []


def test_a_wrong_token_asks_for_the_right_one(live_server, redis_url, browser, bot_url):
    match_id, _ = person_against_bot(live_server, bot_url, seed=4)
    browser.get(f"{live_server.url}/ui/play/{match_id}#token=not-the-token")
    form = browser.find_element(By.ID, "token-form")
    wait_for(browser, form.is_displayed, "the token form")
    problem = browser.find_element(By.ID, "token-problem")
    wait_for(browser, lambda: problem.text == "This is not a seat token of this match.",
             "the reason")
    refused = page_errors(browser)  # the browser reports the refused request itself
    assert len(refused) == 1 and "/observation" in refused[0] and "403" in refused[0]


def test_the_viewer_follows_a_match_while_it_is_played(live_server, redis_url, workers, browser,
                                                      bot_url):
    workers.start_ready(1)
    match_id, token = person_against_bot(live_server, bot_url, seed=6)
    browser.get(f"{live_server.url}/ui/matches/{match_id}")
    wait_for(browser, lambda: board(browser, "data-shown") == "0/", "the deal")
    assert browser.find_element(By.ID, "live").is_displayed()
    auth = {"Authorization": f"Bearer {token}"}
    rng = random.Random(6)
    while True:  # the person plays through the API; the viewer follows every step
        seen = requests.get(f"{live_server.url}/matches/{match_id}/observation", headers=auth,
                            timeout=10).json()
        if seen["status"] == "finished":
            break
        if seen["to_move"] != 0:
            time.sleep(0.02)
            continue
        shown = f"{seen['step']}/"
        wait_for(browser, lambda shown=shown: board(browser, "data-shown") == shown,
                 f"the viewer at step {shown}")
        frame = requests.get(f"{live_server.url}/matches/{match_id}/replay/{seen['step']}",
                             headers=AUTH, timeout=10).json()  # the admin's, while it runs
        assert log_title(browser) == f"Events ({len(frame['view']['log'])})"
        requests.post(f"{live_server.url}/matches/{match_id}/actions", headers=auth, timeout=10,
                      json={"step": seen["step"], "action": rng.choice(seen["legal_actions"])})
    steps = requests.get(f"{live_server.url}/matches/{match_id}", timeout=10).json()["step"]
    wait_for(browser, lambda: board(browser, "data-shown") == f"{steps}/", "the last step")
    wait_for(browser, lambda: not browser.find_element(By.ID, "live").is_displayed(),
             "the end of the live view")
    assert browser.find_element(By.ID, "seat").is_enabled()  # the replay, as every seat
    final = requests.get(f"{live_server.url}/matches/{match_id}/replay/{steps}", timeout=10).json()
    assert log_title(browser) == f"Events ({len(final['view']['log'])})"
    assert page_errors(browser) == []
