"""docs/bots.md stays true: its game reference names every action, its whole HTTP bot in
under 30 lines really passes `referee check-bot` in every game, its whole stdin/stdout bot
in under 20 lines plays every game through the bridge, and its signature checks in Python
and Node.js accept exactly what the referee signs."""

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import engines
from bots.python import random_bot
from engines.reference import BEGIN, END
from referee.cli import main
from referee.match.signing import signature_header

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "bots.md"


def _whole_bot() -> str:
    after = GUIDE.read_text().split("<!-- whole-bot -->", 1)[1]
    return after.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.parametrize("game", engines.names())
def test_reference_covers_every_action_of_every_game(game):
    """The reference is generated from the schemas of describe() (refresh: python3 -m
    engines.reference --write docs/bots.md); it must at least name every game and every
    action type."""
    reference = GUIDE.read_text().split(BEGIN, 1)[1].split(END, 1)[0]
    section = reference.split(f"### {game}:", 1)
    assert len(section) == 2, f"docs/bots.md has no reference for {game}"
    for kind in engines.get(game).describe()["actions"]:
        assert f"`{kind}`" in section[1].split("\n### ", 1)[0], f"{game}: {kind} undocumented"


def test_the_whole_bot_is_under_30_lines():
    assert len(_whole_bot().splitlines()) < 30


@pytest.fixture
def whole_bot_url(process_bot, tmp_path):
    script = tmp_path / "tiny_bot.py"
    script.write_text(_whole_bot())
    with process_bot([sys.executable, str(script), "{port}"]) as url:
        yield url


def test_the_whole_bot_passes_check_bot_in_every_game(whole_bot_url, capsys):
    for game in engines.names():
        status = main(["check-bot", whole_bot_url, "--game", game, "--playouts", "1"])
        assert status == 0, capsys.readouterr().out


# ----- the stdin/stdout path and the signature checks (issue 18) ------------------------------
def _block_after(marker: str, language: str) -> str:
    after = GUIDE.read_text().split(marker, 1)[1]
    return after.split(f"```{language}\n", 1)[1].split("```", 1)[0]


def test_the_whole_stdio_bot_is_under_20_lines():
    assert len(_block_after("<!-- whole-stdio-bot -->", "python").splitlines()) < 20


@pytest.mark.parametrize("game", engines.names())
def test_the_whole_stdio_bot_plays_every_game_through_the_bridge(python_bot, tmp_path, capsys,
                                                                 game):
    script = tmp_path / "tiny_bot.py"
    script.write_text(_block_after("<!-- whole-stdio-bot -->", "python"))
    replay = tmp_path / "replay.json"
    with python_bot(random_bot.make_choose(2)) as other:
        status = main(["play", "--game", game, "--bot", f"cmd:{sys.executable} {script}",
                       "--bot", other, "--quiet", "--replay", str(replay)])
    out = capsys.readouterr()
    record = json.loads(replay.read_text())
    assert status == 0, out.out
    assert record["forfeit"] is None and record["steps"]
    assert all(step["fault"] is None for step in record["steps"])


SIGNATURE_CASES = [  # (secret the header is made with, its age in seconds, accepted?)
    ("s3cret", 0, True), ("s3cret", 100, True), ("guess", 0, False), ("s3cret", 1000, False),
]


def _signature_cases() -> list[tuple[str, bytes, bool]]:
    body = b'{"protocol":"referee/1","type":"result","match_id":"m1"}'
    now = int(time.time())
    cases = [(signature_header(secret, body, now - age), body, ok)
             for secret, age, ok in SIGNATURE_CASES]
    good = signature_header("s3cret", body, now)
    return cases + [(good, body + b" ", False), ("", body, False), ("t=1", body, False)]


def test_the_python_signature_check_of_the_guide_agrees_with_the_referee():
    namespace = {}
    exec(_block_after("### Signed requests", "python"), namespace)
    for header, body, accepted in _signature_cases():
        assert namespace["signature_ok"]("s3cret", header or None, body) is accepted, header


def test_the_node_signature_check_of_the_guide_agrees_with_the_referee(tmp_path):
    node = shutil.which("node")
    assert node, "node is not installed: run scripts/test, which installs it"
    cases = [{"header": header, "body": body.decode(), "accepted": accepted}
             for header, body, accepted in _signature_cases()]
    script = tmp_path / "check.js"
    script.write_text(_block_after("### Signed requests", "js") + f"""
const cases = {json.dumps(cases)};
console.log(JSON.stringify(cases.map((c) =>
  signatureOk('s3cret', c.header || undefined, Buffer.from(c.body)) === c.accepted)));
""")
    done = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [True] * len(cases)
