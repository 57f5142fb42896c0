"""The web pages in headless Chromium against the real app, Redis, worker and HTTP bots:
the index, a leaderboard, and a replay stepped forwards and backwards as every seat.

Each drawing is checked against the API's own answer for the same step and seat, and a
screenshot of each game's replay view is saved to <dir>/<game>.png, where <dir> is
$REFEREE_SCREENSHOTS (`REFEREE_SCREENSHOTS=docs/screenshots scripts/test tests/web` refreshes
the ones in docs/), or the test's temporary folder, so a test run leaves the tree clean.
"""

from __future__ import annotations

import base64
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

import engines
from tests.support.apitest import SECRET, drive_match

WAIT_S = 15


def wait_for(browser, condition, what: str, timeout: float = WAIT_S):
    """Until `condition()` holds; a page redrawn meanwhile (a stale element) is asked again."""
    return WebDriverWait(browser, timeout, ignored_exceptions=(StaleElementReferenceException,)
                         ).until(lambda _: condition(), message=what)


def to_fixed(value: float, digits: int) -> str:
    """`value.toFixed(digits)` as the pages' JavaScript writes it: the double's exact value
    rounded half away from zero (Python's format rounds a tie such as 6.625 to even)."""
    return str(Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def text(browser, element_id: str) -> str:
    """The element's text; a page that redrew it between the find and the read is asked again."""
    for _ in range(2):
        try:
            return browser.find_element(By.ID, element_id).text
        except StaleElementReferenceException:
            pass
    return browser.find_element(By.ID, element_id).text


def count(browser, css: str) -> int:
    return len(browser.find_elements(By.CSS_SELECTOR, css))


def page_errors(browser) -> list[str]:
    """Errors the page logged (failed requests, script errors); the missing favicon aside."""
    return [entry["message"] for entry in browser.get_log("browser")
            if entry["level"] == "SEVERE" and "favicon.ico" not in entry["message"]]


def shown(browser) -> str | None:
    """The "step/seat" the replay board last finished drawing."""
    return browser.find_element(By.ID, "board").get_attribute("data-shown")


def board_error(browser) -> str | None:
    errors = browser.find_elements(By.CSS_SELECTOR, "#board .error, #status .error")
    return errors[0].text if errors else None


def wait_shown(browser, step: int, seat: int | None) -> None:
    """Wait until the board shows that step as that seat; fail at once on an error."""
    expected = f"{step}/{'' if seat is None else seat}"
    wait_for(browser, lambda: shown(browser) == expected or board_error(browser),
             f"the board to show {expected}")
    assert board_error(browser) is None
    assert text(browser, "step-label").startswith(f"step {step} / ")


def observation(site, match_id: str, step: int, seat: int | None) -> dict:
    query = "" if seat is None else f"?seat={seat}"
    return site.api(f"/matches/{match_id}/replay/{step}{query}")["view"]


def check_aladino(browser, obs: dict, seat: int | None) -> None:
    tokens = [space["token"] for space in obs["cave"] if space["token"]]
    assert count(browser, "#cave .space") == 61
    assert count(browser, "#cave .token.up") == sum(t["face"] == "up" for t in tokens)
    assert count(browser, "#cave .token.down") == sum(t["face"] == "down" for t in tokens)
    assert count(browser, "#cave .aladdin") == 1
    scores = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".aladino-seat .score")]
    assert scores == [str(score) for score in obs["scores"]]
    on_boards = sum(len(stack) for board in obs["boards"] for row in board for stack in row)
    assert count(browser, ".aladino-board .token") == on_boards


def check_aldabas(browser, obs: dict, seat: int | None) -> None:
    for player in obs["players"]:
        panel = f'.aldabas-seat[data-seat="{player["seat"]}"]'
        assert count(browser, f"{panel} .aldabas-block .door") == len(player["block"])
        purse = browser.find_element(By.CSS_SELECTOR, f"{panel} .purse").text
        assert purse == str(player["purse"])
    assert count(browser, "#dock .dock-slot") == sum(s["card"] is not None for s in obs["dock"])
    if seat is None:
        assert count(browser, ".own-hand") == 0
    else:
        hand = f'.aldabas-seat[data-seat="{seat}"] .own-hand .door'
        assert count(browser, hand) == len(obs["you"]["hand"])


def check_caravans(browser, obs: dict, seat: int | None) -> None:
    assert count(browser, ".caravans-map") == len(obs["colours"])
    owned = sum(owner is not None for owner in obs["owner"].values())
    assert count(browser, '.route:not([data-owner="none"])') == owned
    held = sum(holder is not None for holder in obs["control"].values())
    assert count(browser, '.city:not([data-control="none"])') == held
    gold = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".caravans-seat .gold")]
    assert gold == [str(g) for g in obs["gold"]]
    if seat is not None:
        hand = f'.caravans-seat[data-seat="{seat}"] .cv-hand .cv-card'
        assert count(browser, hand) == len(obs["hand"])


CHECKS = {"aladino": check_aladino, "aldabas": check_aldabas, "caravans": check_caravans}


def check_drawing(browser, site, game: str, match_id: str, step: int, seat: int | None) -> None:
    wait_shown(browser, step, seat)
    CHECKS[game](browser, observation(site, match_id, step, seat), seat)


def save_screenshot(browser, path: Path) -> None:
    """The whole page, beyond the window's height."""
    width, height = browser.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {
        "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))


def test_index_lists_the_games_tournaments_and_recent_matches(site, browser):
    recent = site.api("/matches?limit=20")["matches"]
    browser.get(f"{site.url}/ui/")
    wait_for(browser, lambda: count(browser, "#games .game") == len(engines.names()),
             "a card per game")
    wait_for(browser, lambda: count(browser, "#matches table.matches tbody tr") == len(recent),
             "the recent matches")
    wait_for(browser, lambda: count(browser, "#tournaments table.tournaments tbody tr")
             == len(site.tournaments), "the tournaments")
    links = {e.get_attribute("href") for e in browser.find_elements(By.CSS_SELECTOR, "main a")}
    for match in recent:
        assert f"{site.url}/ui/matches/{match['id']}" in links
    for game, tournament_id in site.tournaments.items():
        assert f"{site.url}/ui/tournaments/{tournament_id}" in links
        assert f"{site.url}/ui/games/{game}" in links
    assert page_errors(browser) == []


@pytest.mark.parametrize("game", engines.names())
def test_tournament_shows_progress_standings_ratings_and_cross_table(site, browser, game):
    tournament = site.api(f"/tournaments/{site.tournaments[game]}")
    browser.get(f"{site.url}/ui/tournaments/{tournament['id']}")
    total = tournament["progress"]["total"]
    wait_for(browser, lambda: text(browser, "progress-text") == f"{total} of {total} matches done",
             "the finished progress")
    rows = browser.find_elements(By.CSS_SELECTOR, "#standings-table tbody tr")
    names = [row.find_elements(By.TAG_NAME, "td")[1].text for row in rows]
    assert names == [row["name"] for row in tournament["standings"]]
    headers = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR,
                                                           "#standings-table thead th")]
    wins, draws = headers.index("wins"), headers.index("draws")
    assert [(row.find_elements(By.TAG_NAME, "td")[wins].text,
             row.find_elements(By.TAG_NAME, "td")[draws].text) for row in rows] == [
        (str(row["wins"]), str(row["draws"])) for row in tournament["standings"]]
    assert count(browser, "#ratings-table tbody tr") == len(tournament["ratings"]) == 3
    bots = tournament["cross_table"]["bots"]
    assert count(browser, "#crosstable-table tbody tr") == len(bots)
    first, second = bots[0], bots[1]
    cell = browser.find_element(By.CSS_SELECTOR,
                                "#crosstable-table tbody tr:nth-child(1) td:nth-child(3)")
    assert float(cell.text) == tournament["cross_table"]["cells"][first][second]
    assert count(browser, ".match-links a") == total
    assert page_errors(browser) == []


@pytest.mark.parametrize("game", engines.names())
def test_leaderboard_lists_the_rated_bots_with_their_history(site, browser, game):
    ratings = site.api(f"/ratings/{game}")
    browser.get(f"{site.url}/ui/games/{game}")
    rows = "#leaderboard-table tbody tr"
    wait_for(browser, lambda: count(browser, rows) == len(ratings["leaderboard"]) > 0,
             "a row per rated bot")
    names = [row.find_elements(By.TAG_NAME, "td")[1].text
             for row in browser.find_elements(By.CSS_SELECTOR, rows)]
    assert names == [entry["name"] for entry in ratings["leaderboard"]]
    with_history = [entry for entry in ratings["leaderboard"] if entry["games"]]
    wait_for(browser, lambda: count(browser, "#history-plot path.series") == len(with_history)
             > 0, "a line per bot with rated matches")
    assert page_errors(browser) == []


@pytest.mark.parametrize("game", engines.names())
def test_replay_steps_forwards_and_backwards_as_any_seat(site, browser, game, screenshots):
    match_id = site.matches[game]
    match = site.api(f"/matches/{match_id}")
    last = match["step"]
    browser.get(f"{site.url}/ui/matches/{match_id}")
    check_drawing(browser, site, game, match_id, 0, None)

    page = browser.find_element(By.TAG_NAME, "body")
    page.send_keys(Keys.ARROW_RIGHT)
    check_drawing(browser, site, game, match_id, 1, None)
    browser.find_element(By.ID, "next").click()
    check_drawing(browser, site, game, match_id, 2, None)
    browser.find_element(By.ID, "prev").click()
    check_drawing(browser, site, game, match_id, 1, None)
    page.send_keys(Keys.ARROW_LEFT)
    check_drawing(browser, site, game, match_id, 0, None)
    browser.find_element(By.ID, "last").click()
    check_drawing(browser, site, game, match_id, last, None)

    middle = last * 2 // 3
    browser.execute_script("const s = document.getElementById('slider'); s.value = arguments[0];"
                           "s.dispatchEvent(new Event('input'));", middle)
    check_drawing(browser, site, game, match_id, middle, None)
    seats = Select(browser.find_element(By.ID, "seat"))
    assert len(seats.options) == len(match["seats"]) + 1
    for seat in range(len(match["seats"])):
        seats.select_by_value(str(seat))
        check_drawing(browser, site, game, match_id, middle, seat)
    seats.select_by_value("0")
    check_drawing(browser, site, game, match_id, middle, 0)
    assert page_errors(browser) == []
    browser.execute_script("document.activeElement.blur()")
    save_screenshot(browser, screenshots / f"{game}.png")
    assert (screenshots / f"{game}.png").stat().st_size > 10_000


def test_the_match_page_shows_the_apis_seed_digit_for_digit(site, browser):
    """Issue 15.1: the seed the server drew reads the same in the page's JavaScript."""
    seed = site.api(f"/matches/{site.drawn_seed_match}")["seed"]
    browser.get(f"{site.url}/ui/matches/{site.drawn_seed_match}")
    wait_for(browser, lambda: browser.find_elements(By.ID, "match-seed"), "the seed")
    assert text(browser, "match-seed") == str(seed)
    assert page_errors(browser) == []


def test_the_viewer_as_another_seat_shows_a_secret_move_as_that_seats_log(site, browser):
    """Issue 15.2: seat 0's Aldabas vault door is in seat 0's view of its move and in
    nobody else's, who see the public event."""
    match_id = site.matches["aldabas"]
    record = site.api(f"/matches/{match_id}/replay")
    index = next(i for i, s in enumerate(record["steps"])
                 if s["seat"] == 0 and s["action"]["type"] == "setup_vault")
    card = record["steps"][index]["action"]["card"]
    browser.get(f"{site.url}/ui/matches/{match_id}#step={index}&seat=1")
    wait_shown(browser, index, 1)
    assert text(browser, "step-action") == "setup_vault"
    seats = Select(browser.find_element(By.ID, "seat"))
    seats.select_by_value("")
    wait_shown(browser, index, None)
    assert text(browser, "step-action") == "setup_vault"
    seats.select_by_value("0")
    wait_shown(browser, index, 0)
    assert text(browser, "step-action") == f"setup_vault card={card}"
    assert page_errors(browser) == []


def test_a_running_tournament_page_follows_it_to_the_end(site, browser):
    bots = [site.bots["greedy-aladino"], site.bots["random-1"]]
    tournament = site.post("/tournaments", {"game": "aladino", "bots": bots, "players": 2})
    total = tournament["progress"]["total"]
    browser.get(f"{site.url}/ui/tournaments/{tournament['id']}")
    wait_for(browser, lambda: text(browser, "progress-text") == f"0 of {total} matches done",
             "no match done yet")
    wait_for(browser, lambda: text(browser, "tournament-status") == "running", "running status")
    site.run_worker()
    wait_for(browser, lambda: text(browser, "progress-text") == f"{total} of {total} matches done",
             "the page to refresh itself to the end")
    wait_for(browser, lambda: text(browser, "tournament-status") == "finished",
             "the finished status")
    assert count(browser, "#ratings-table tbody tr") == 2
    assert page_errors(browser) == []


def test_a_match_not_over_is_followed_live(site, browser):
    """Nobody has moved yet: the viewer shows the deal as the spectator, live, the seat to
    move waited for (tests/web/test_play_page.py follows a match to its end)."""
    match = site.post("/matches", {"game": "aladino", "seats": [{"kind": "pull"}] * 2,
                                   "pull_deadline_ms": 100})
    browser.get(f"{site.url}/ui/matches/{match['id']}")
    wait_shown(browser, 0, None)
    assert browser.find_element(By.ID, "live").is_displayed()
    assert text(browser, "live-waiting").startswith("seat 0")
    assert not browser.find_element(By.ID, "seat").is_enabled()
    check_aladino(browser, site.admin_api(f"/matches/{match['id']}/replay/0")["view"], None)
    assert page_errors(browser) == []


def test_an_sprt_page_plots_the_llr_and_shows_the_pentanomial_and_decision(site, browser):
    bots = [site.bots["greedy-aladino"], site.bots["random-1"]]
    tournament = site.post("/tournaments", {
        "game": "aladino", "format": "sprt", "bots": bots, "elo0": 0, "elo1": 150,
        "max_matches": 60, "concurrency": 4, "deadline_ms": 20000})
    site.run_worker()
    result = site.api(f"/tournaments/{tournament['id']}")["sprt"]
    assert result["decision"] == "H1"
    browser.get(f"{site.url}/ui/tournaments/{tournament['id']}")
    wait_for(browser, lambda: text(browser, "sprt-decision")
             == f"H1 accepted after {result['decided_after']} pairs", "the decision")
    assert text(browser, "tournament-format") == "SPRT"
    path = browser.find_element(By.CSS_SELECTOR, "#llr-plot path.llr").get_attribute("d")
    assert path.count("L") == len(result["history"]), "a point per counted pair"
    assert count(browser, "#llr-plot line.bound") == 3
    cells = browser.find_elements(By.CSS_SELECTOR, "#pentanomial-table tbody td")
    assert [int(cell.text) for cell in cells] == result["pentanomial"]
    assert text(browser, "sprt-llr").startswith(f"LLR {to_fixed(result['llr'], 2)} (-2.94, 2.94)")
    assert page_errors(browser) == []


def test_a_swiss_page_shows_the_rounds_and_buchholz(site, browser):
    bots = [site.bots["greedy-aladino"], site.bots["random-1"], site.bots["random-2"]]
    tournament = site.post("/tournaments", {"game": "aladino", "format": "swiss",
                                            "bots": bots, "rounds": 2})
    site.run_worker()
    view = site.api(f"/tournaments/{tournament['id']}")
    assert view["status"] == "finished"
    browser.get(f"{site.url}/ui/tournaments/{tournament['id']}")
    wait_for(browser, lambda: count(browser, "#swiss-rounds .swiss-round") == 2, "two rounds")
    rows = browser.find_elements(By.CSS_SELECTOR, "#swiss-table tbody tr")
    shown = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")][1:4] for row in rows]
    assert shown == [[row["name"], to_fixed(row['points'], 1), to_fixed(row['buchholz'], 1)]
                     for row in view["swiss"]["standings"]]
    rounds = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#swiss-rounds p")]
    names = {bot["bot_id"]: bot["name"] for bot in view["bots"]}
    for line, played in zip(rounds, view["swiss"]["rounds"], strict=True):
        assert line.endswith(f"bye: {names[played['bye']]}")
    assert page_errors(browser) == []


def test_a_finished_match_waits_while_its_deal_is_still_played(site, browser):
    """A tournament's rotations share a deal: one rotation is played (by the real match job,
    in-process), the other still queued, so the first one's replay stays closed until a
    worker plays the second."""
    bots = [site.bots["greedy-aladino"], site.bots["random-1"]]
    tournament = site.post("/tournaments", {"game": "aladino", "bots": bots, "players": 2})
    first, second = tournament["matches"]
    drive_match(site.redis_url, first, SECRET)
    assert site.api(f"/matches/{first}")["status"] == "finished"
    assert site.api(f"/matches/{second}")["status"] == "queued"
    browser.get(f"{site.url}/ui/matches/{first}")
    wait_for(browser, lambda: text(browser, "waiting").startswith(
        "The match is over, but another match on the same deal is still being played"),
        "the note that the deal is still being played")
    assert not browser.find_element(By.ID, "viewer").is_displayed()
    site.run_worker()
    wait_for(browser, lambda: browser.find_element(By.ID, "viewer").is_displayed(),
             "the replay once the deal is over")
    assert page_errors(browser) == []


def test_the_viewer_shows_a_steps_clocks_debug_and_info(site, browser):
    """Issue 26: beside each move, what it took and every seat's clock after it; as the
    seat that played it, its debug and info (cut to 4 KiB, marked so)."""
    match_id = site.clocked_match
    record = site.api(f"/matches/{match_id}/replay")
    index = next(i for i, s in enumerate(record["steps"]) if s["seat"] == 0 and i > 0)
    step = record["steps"][index]
    browser.get(f"{site.url}/ui/matches/{match_id}#step={index}&seat=0")
    wait_shown(browser, index, 0)
    clock = text(browser, "step-clock")
    assert clock.startswith(f"took {to_fixed(step['elapsed_ms'] / 1000, 2)} s · clocks: ")
    assert f"{to_fixed(step['clock']['remaining_ms'][1] / 1000, 2)} s" in clock
    assert '"score":0.5' in text(browser, "step-info")
    assert text(browser, "step-debug").startswith(f"step {index} ")
    assert text(browser, "step-debug").endswith("(cut)")
    Select(browser.find_element(By.ID, "seat")).select_by_value("1")
    wait_shown(browser, index, 1)
    assert text(browser, "step-clock").startswith("took ")
    assert not browser.find_elements(By.ID, "step-debug"), "another seat's debug is private"
    assert page_errors(browser) == []
