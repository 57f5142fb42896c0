"""`referee tournament` end to end: a real referee on a loopback port, real workers, real
bots; the command starts a tournament (a round-robin, a Swiss, a gauntlet), follows it and
prints the final table."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.support.apitest import ADMIN, ROOT


def referee_tournament(*args: str, token: str | None = ADMIN,
                       timeout: float = 60) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "REFEREE_ADMIN_TOKEN"}
    if token is not None:
        env["REFEREE_ADMIN_TOKEN"] = token
    return subprocess.run([sys.executable, "-m", "referee.cli", "tournament", *args], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_the_command_starts_follows_and_prints_a_tournament(api, register_bots, workers,
                                                            app_url):
    bots = register_bots(3)
    workers.start(1)
    done = referee_tournament("--server", app_url, "--game", "caravans", "--rounds", "1",
                              "--seed", "8", "--poll", "0.2",
                              *[arg for bot in bots for arg in ("--bot", bot)])
    assert done.returncode == 0, done.stderr
    tournament_id = re.search(r"tournament (t-[0-9a-f]+): 6 caravans matches", done.stdout)[1]
    view = api.get(f"/tournaments/{tournament_id}").get_json()
    assert view["status"] == "finished" and view["progress"]["done"] == 6
    assert "6/6" in done.stderr  # the progress bar's last state
    lines = done.stdout.splitlines()
    standings = lines[lines.index("Standings") + 2:lines.index("Standings") + 5]
    assert [line.split()[1] for line in standings] == [row["name"] for row in view["standings"]]
    ratings = lines[lines.index("Bradley-Terry ratings with 95% intervals") + 2:][:3]
    for line, row in zip(ratings, view["ratings"], strict=True):
        assert line.split()[1:5] == [row["name"], f"{row['rating']:.0f}", f"{row['low']:.0f}",
                                     f"{row['high']:.0f}"]


def test_the_command_reports_a_refusal_and_a_missing_token(register_bots, app_url):
    bots = register_bots(2)
    args = ["--server", app_url, "--game", "aladino", "--players", "3",
            *[arg for bot in bots for arg in ("--bot", bot)]]
    refused = referee_tournament(*args)
    assert refused.returncode == 1 and "HTTP 422" in refused.stderr
    assert "at least 3 bots" in refused.stderr
    assert referee_tournament(*args, token="wrong").returncode == 1
    missing = referee_tournament(*args, token=None)
    assert missing.returncode == 2 and "REFEREE_ADMIN_TOKEN" in missing.stderr
    unreachable = referee_tournament("--server", "http://127.0.0.1:9", "--game", "aladino",
                                     "--bot", "x")
    assert unreachable.returncode == 1 and "cannot reach" in unreachable.stderr


def test_the_command_runs_a_swiss_and_a_gauntlet(api, register_bots, workers, app_url):
    bots = register_bots(3)
    workers.start(2)

    def tournament(*args: str) -> subprocess.CompletedProcess:
        return referee_tournament("--server", app_url, "--game", "aladino", *args,
                                  timeout=240)

    swiss = tournament("--format", "swiss", "--rounds", "2", "--poll", "0.2",
                       *[arg for bot in bots for arg in ("--bot", bot)])
    assert swiss.returncode == 0, swiss.stderr
    assert "swiss of aladino" in swiss.stdout
    assert "Swiss standings (ties by Buchholz)" in swiss.stdout
    gauntlet = tournament("--format", "gauntlet", "--challenger", bots[0], "--bot", bots[1],
                          "--bot", bots[2], "--poll", "0.2")
    assert gauntlet.returncode == 0, gauntlet.stderr
    created = re.search(r"tournament (t-[0-9a-f]+): 4 aladino matches", gauntlet.stdout)[1]
    view = api.get(f"/tournaments/{created}").get_json()
    assert view["format"] == "gauntlet" and view["challenger"] == bots[0]
    first_bot = tournament("--format", "gauntlet", "--bot", bots[2], "--bot", bots[0],
                           "--poll", "0.2")
    assert first_bot.returncode == 0, first_bot.stderr
    created = re.search(r"tournament (t-[0-9a-f]+): 2 aladino matches", first_bot.stdout)[1]
    assert api.get(f"/tournaments/{created}").get_json()["challenger"] == bots[2]
    refused = tournament("--format", "gauntlet", "--challenger", bots[1], "--bot", bots[1])
    assert refused.returncode == 1 and "challenger" in refused.stderr
