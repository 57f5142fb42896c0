"""`referee sprt` end to end: a real referee on a loopback port, real workers, real bots (the
SPRT of the greedy Aladino bot against the random one: see tests/tournament/test_formats.py
for why it accepts H1 within 80 matches)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.support.apitest import ADMIN, ROOT
from tournament import sprt

LINE = re.compile(r"^LLR (-?\d+\.\d\d) \((-2\.94), (2\.94)\) \[0\.00, 150\.00\]  "
                  r"Elo (-?\d+\.\d) ± (\d+\.\d)  Ptnml \[(\d+), (\d+), (\d+), (\d+), (\d+)\]  "
                  r"Games (\d+)$")


def referee(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "REFEREE_ADMIN_TOKEN": ADMIN}
    return subprocess.run([sys.executable, "-m", "referee.cli", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=240)


def test_referee_sprt_prints_a_line_per_pair_and_the_decision(api, strength_urls, workers,
                                                              app_url):
    greedy = api.register_bot(strength_urls["greedy"], games=["aladino"], name="greedy")
    rand = api.register_bot(strength_urls["random"], games=["aladino"], name="random")
    workers.start(2)
    done = referee("sprt", "--server", app_url, "--game", "aladino", "--bot", greedy,
                   "--bot", rand, "--elo1", "150", "--max-matches", "80", "--concurrency", "4",
                   "--deadline-ms", "20000", "--poll", "0.2")
    assert done.returncode == 0, done.stderr
    tournament_id = re.search(r"SPRT (t-[0-9a-f]+): greedy \(challenger\) vs random",
                              done.stdout)[1]
    view = api.get(f"/tournaments/{tournament_id}").get_json()["sprt"]
    lines = [LINE.match(line) for line in done.stdout.splitlines() if line.startswith("LLR")]
    assert all(lines) and len(lines) == view["pairs"]
    pentanomial = [0] * 5
    for line, (_, llr, bucket) in zip(lines, view["history"], strict=True):
        pentanomial[bucket] += 1
        estimate = sprt.elo_estimate(pentanomial)
        assert float(line[1]) == pytest.approx(llr, abs=0.006)
        assert [int(n) for n in line.groups()[5:10]] == pentanomial
        assert float(line[4]) == pytest.approx(estimate.elo, abs=0.06)
        assert float(line[5]) == pytest.approx(estimate.error, abs=0.06)
        assert int(line[11]) == 2 * sum(pentanomial)
    assert done.stdout.splitlines()[-1].startswith(
        f"SPRT ([0.00, 150.00]) completed - H1 was accepted after {view['decided_after']} pairs")
