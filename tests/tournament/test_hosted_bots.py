"""Hosted bots (issue 29) against the real stack: the API in this process, `referee worker
--hosted` processes building and playing uploaded code in bubblewrap sandboxes, one Redis.
The bots (tests/support/hosted) play the first legal action, in every language."""

from __future__ import annotations

import asyncio
import base64
import gzip
import io
import os
import re
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import engines
from referee.match import sandbox
from tests.support.apitest import ADMIN, ROOT, worker_command, worker_env
from tests.support.hosted import ENTRY, source
from tests.support.waiting import wait_for
from tournament import hosted

BROKEN_C = {"language": "c", "files": {"main.c": "int main(void) { return 0 }\n"}}



def upload(api, language: str, name: str, token: str = ADMIN, **body) -> dict:
    response = api.post("/bots", token=token, json={
        "name": name, "games": engines.names(), "source": source(language), **body})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def settled(api, bot_id: str, token: str = ADMIN) -> dict:
    """The bot once its current version's build is over."""
    return wait_for(lambda: (bot := api.get(f"/bots/{bot_id}", token=token).get_json())
                    ["status"] != "building" and bot, what=f"the build of {bot_id}")


def finished(api, match_id: str) -> dict:
    return wait_for(lambda: (match := api.get(f"/matches/{match_id}", token=ADMIN).get_json())
                    ["status"] in ("finished", "failed") and match, what=f"match {match_id}")


def bot_seats(bot_ids: list[str]) -> list[dict]:
    return [{"kind": "bot", "bot_id": bot_id} for bot_id in bot_ids]


def against_an_honest_bot(api, name: str, program: str) -> str:
    """A match (Aladino, 10 s deadlines) of the Python `program`, built as the bot `name`,
    in seat 0 against the first-legal bot; its id, once both are built."""
    bot = upload(api, "python3", name, source={"language": "python3",
                                                "files": {"main.py": program}})["id"]
    honest = upload(api, "python3", "honest")["id"]
    assert settled(api, bot)["status"] == settled(api, honest)["status"] == "ready"
    return api.create_match("aladino", bot_seats([bot, honest]), deadline_ms=10_000)["id"]


def languages() -> list[str]:
    return sorted(sandbox.languages())


def test_the_workers_languages_are_listed(api, workers):
    """Contract: GET /languages lists at least python3, c, cpp, node and java or perl."""
    workers.start_ready(1, hosted=True)
    wait_for(lambda: api.get("/languages").get_json()["languages"], what="the announcement")
    listed = {row["name"]: row for row in api.get("/languages").get_json()["languages"]}
    assert {"python3", "c", "cpp", "node"} <= set(listed)
    assert {"java", "perl"} & set(listed)
    assert all(row["version"] and row["run"] for row in listed.values())


def test_a_bot_of_every_language_builds_and_plays_a_full_match_of_every_game(api, workers):
    """Contract: each supported language builds (`building` -> `ready`), and plays whole
    matches of every game through the API and a hosted worker, speaking the stdin/stdout
    protocol, without a fault; its stderr is kept for its owner and the admin."""
    workers.start_ready(1, hosted=True)
    bots = {language: upload(api, language, f"first-{language}")["id"]
            for language in languages()}
    for language, bot_id in bots.items():
        bot = settled(api, bot_id)
        build = api.get(f"/bots/{bot_id}/build", token=ADMIN).get_json()
        assert bot["status"] == "ready", (language, build["log"])
        assert bot["language"] == language and build["status"] == "ready"
    matches = []
    for game in engines.names():
        players = engines.get(game).max_players
        order = list(bots.values())
        for start in range(0, len(order), players):
            seats = order[start:start + players]
            seats += [bots["python3"]] * max(0, 2 - len(seats))
            matches.append(api.create_match(game, bot_seats(seats), deadline_ms=10_000)["id"])
    matches.append(api.create_match("aldabas", bot_seats([bots["c"]]), deadline_ms=10_000,
                                    options={"mode": "solo"})["id"])
    for match_id in matches:
        match = finished(api, match_id)
        assert match["status"] == "finished", match
        replay = api.get(f"/matches/{match_id}/replay", token=ADMIN).get_json()
        faults = [step["fault"] for step in replay["steps"] if step["fault"]]
        assert not faults, (match_id, faults)
    match_id, seat = next((match_id, seat["seat"]) for match_id in matches
                          for seat in api.get(f"/matches/{match_id}", token=ADMIN)
                          .get_json()["seats"] if seat["bot_id"] == bots["python3"])
    stderr = wait_for(lambda: (answer := api.get(
        f"/matches/{match_id}/stderr?seat={seat}", token=ADMIN)
    ).status_code == 200 and answer, what="the stderr")
    assert stderr.mimetype == "text/plain"
    assert b"result: " in stderr.data  # the result line reached the program


def test_a_build_that_fails_is_build_failed_with_its_log_and_cannot_be_seated(api, workers):
    """Contract: `building`, then `build_failed` with the compiler's log; a bot that is not
    `ready` cannot be seated (409 bot/not-ready)."""
    broken = api.post("/bots", token=ADMIN, json={
        "name": "broken", "games": ["aladino"], "source": BROKEN_C}).get_json()
    assert broken["status"] == "building"
    refused = api.post("/matches", token=ADMIN, json={
        "game": "aladino", "seats": bot_seats([broken["id"]] * 2)})
    assert refused.status_code == 409, refused.get_json()
    assert refused.get_json()["type"].endswith("bot/not-ready")
    workers.start_ready(1, hosted=True)
    assert settled(api, broken["id"])["status"] == "build_failed"
    build = api.get(f"/bots/{broken['id']}/build", token=ADMIN).get_json()
    assert "error" in build["log"] and build["finished_at"]
    refused = api.post("/matches", token=ADMIN, json={
        "game": "aladino", "seats": bot_seats([broken["id"]] * 2)})
    assert refused.status_code == 409


def test_new_source_is_a_new_version_built_again(api, workers):
    """Contract: a PATCH with new source is a new version, built again; the old build is
    kept (GET /bots/{id}/build?version=1)."""
    workers.start_ready(1, hosted=True)
    bot = upload(api, "python3", "versioned")
    settled(api, bot["id"])
    patched = api.request("PATCH", f"/bots/{bot['id']}", token=ADMIN,
                          json={"source": BROKEN_C})
    assert patched.status_code == 200, patched.get_json()
    assert patched.get_json()["version"] == 2 and patched.get_json()["language"] == "c"
    assert settled(api, bot["id"])["status"] == "build_failed"
    first = api.get(f"/bots/{bot['id']}/build?version=1", token=ADMIN).get_json()
    assert first["status"] == "ready" and first["language"] == "python3"
    same = api.request("PATCH", f"/bots/{bot['id']}", token=ADMIN, json={"source": BROKEN_C})
    assert same.get_json()["version"] == 2  # the same source again: no new version


def test_only_hosted_workers_take_hosted_matches(api, workers, node_bot_url):
    """Contract: a worker without --hosted never takes a hosted match (its own queue); a
    hosted worker started later plays it."""
    builder, = workers.start_ready(1, hosted=True)
    bot = upload(api, "python3", "queued-hosted")
    settled(api, bot["id"])
    workers.kill(builder)
    workers.start_ready(1)
    push = api.register_bot(node_bot_url, name="push")
    waiting = api.create_match("aladino", bot_seats([bot["id"], push]))["id"]
    played = api.create_match("aladino", bot_seats([push, push]))["id"]
    assert finished(api, played)["status"] == "finished"
    assert api.get(f"/matches/{waiting}", token=ADMIN).get_json()["status"] == "queued"
    workers.start_ready(1, hosted=True)
    assert finished(api, waiting)["status"] == "finished"


def test_a_hosted_worker_without_bubblewrap_fails_at_start_with_one_line(redis_url, tmp_path):
    """Contract: `referee worker --hosted` fails at start, in one line, when bwrap is not
    on PATH."""
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {**worker_env(redis_url), "PATH": str(empty)}
    done = subprocess.run(worker_command("--hosted"), env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "bwrap" in lines[0], done.stderr


# ----- what the API refuses ----------------------------------------------------------------
def tar_gz(build: Callable[[tarfile.TarFile], None]) -> str:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        build(tar)
    return base64.b64encode(buffer.getvalue()).decode()


def add_file(tar: tarfile.TarFile, name: str, content: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(content)
    tar.addfile(info, io.BytesIO(content))


def add_symlink(tar: tarfile.TarFile, name: str, target: str) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    tar.addfile(info)


def raw_tar_gz(*members: tuple[bytes, str, bytes]) -> str:
    """A tar.gz of (type, name, data) members written as they are (a pax header's data too),
    then `main.py`."""
    raw = b""
    for kind, name, data in [*members, (tarfile.REGTYPE, "main.py", GOOD_PY)]:
        info = tarfile.TarInfo(name)
        info.size, info.type = len(data), kind
        raw += info.tobuf(format=tarfile.USTAR_FORMAT) + data + b"\0" * (-len(data) % 512)
    return base64.b64encode(gzip.compress(raw + b"\0" * 1024)).decode()


GOOD_PY = b"print('hi')\n"
REFUSED_SOURCES = {
    "both forms": {"language": "python3", "files": {"main.py": "x"}, "archive": "eA=="},
    "neither form": {"language": "python3"},
    "unknown language": {"language": "cobol", "files": {"main.cob": "x"}},
    "no entry file": {"language": "python3", "files": {"bot.py": "x"}},
    "a path out": {"language": "python3", "files": {"main.py": "x", "../evil.py": "x"}},
    "an absolute path": {"language": "python3", "files": {"main.py": "x", "/etc/x": "x"}},
    "a hidden file": {"language": "python3", "files": {"main.py": "x", ".bashrc": "x"}},
    "over 1 MiB": {"language": "python3", "files": {"main.py": "x" * ((1 << 20) + 1)}},
    "not base64": {"language": "python3", "archive": "not base64!"},
    "not gzip": {"language": "python3", "archive": base64.b64encode(b"plain").decode()},
    "a symlink": {"language": "python3", "archive": tar_gz(lambda tar: (
        add_file(tar, "main.py", GOOD_PY), add_symlink(tar, "shadow", "/etc/shadow")))},
    "a tar path out": {"language": "python3", "archive": tar_gz(lambda tar: (
        add_file(tar, "main.py", GOOD_PY), add_file(tar, "../../x.py", GOOD_PY)))},
    "a gzip bomb": {"language": "python3", "archive": base64.b64encode(
        gzip.compress(b"\0" * (64 << 20))).decode()},
    # pax headers CPython before 3.11.10 parses in quadratic time (CVE-2024-6232): refused
    # as malformed before tarfile reads them (it took the first one, after 0.1 s at this
    # size and 25 s at 128,000 digits, as a header with no records)
    "a pax header of digits": {"language": "python3", "archive": raw_tar_gz(
        (tarfile.XHDTYPE, "pax", b"1" * 8000))},
    "a pax header of bare lengths": {"language": "python3", "archive": raw_tar_gz(
        (tarfile.XGLTYPE, "pax", b"2 " * 4000 + b"x=\n"))},
    "a pax record of a long digit run": {"language": "python3", "archive": raw_tar_gz(
        (tarfile.XHDTYPE, "pax", b"50 comment=" + b"1" * 38 + b"\n"))},
    "a pax size": {"language": "python3", "archive": raw_tar_gz(
        (tarfile.XHDTYPE, "pax", b"10 size=5\n"))},
    "a sparse file": {"language": "python3", "archive": raw_tar_gz(
        (tarfile.GNUTYPE_SPARSE, "holes.py", b""))},
}


SCHEMA_INVALID = {"both forms", "neither form", "unknown language"}


@pytest.mark.parametrize("case", sorted(REFUSED_SOURCES))
def test_bad_source_is_refused_saying_why(api, case):
    """What the spec's schema says is a 400; what only the files show (their paths, the
    entry file, the archive's content, the size) a 422; both name `source`."""
    response = api.post("/bots", token=ADMIN, json={
        "name": "refused", "games": ["aladino"], "source": REFUSED_SOURCES[case]})
    assert response.status_code == (400 if case in SCHEMA_INVALID else 422), response.get_json()
    assert "source" in str(response.get_json()["errors"]), response.get_json()


def test_an_archive_of_files_is_taken_as_the_files_would_be(api):
    packed = tar_gz(lambda tar: add_file(tar, "main.py", GOOD_PY))
    bot = api.post("/bots", token=ADMIN, json={
        "name": "archived", "games": ["aladino"],
        "source": {"language": "python3", "archive": packed}}).get_json()
    same = api.post("/bots", token=ADMIN, json={
        "name": "as-files", "games": ["aladino"],
        "source": {"language": "python3", "files": {"main.py": GOOD_PY.decode()}}}).get_json()
    assert bot["versions"][0]["source_sha256"] == same["versions"][0]["source_sha256"]


def test_an_archive_with_pax_headers_as_tar_tools_write_them_is_taken(api):
    """pax headers of a long path, of macOS's extended attributes and a global one (what
    bsdtar and `tar --format=posix` write) pass the check in front of tarfile."""
    long_path = "lib/" + "a" * 120 + "/util.py"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT,
                      pax_headers={"comment": "made by a test"}) as tar:
        for name, content in (("main.py", GOOD_PY), (long_path, b"X = 1\n")):
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(content), 1733412345.123456
            info.pax_headers = {"LIBARCHIVE.xattr.com.apple.provenance": "AQIAeHl6"}
            tar.addfile(info, io.BytesIO(content))
    response = api.post("/bots", token=ADMIN, json={
        "name": "from-bsdtar", "games": ["aladino"],
        "source": {"language": "python3", "archive": base64.b64encode(buffer.getvalue()).decode()}})
    assert response.status_code == 201, response.get_json()
    assert hosted.source_files({"language": "python3", "archive": base64.b64encode(
        buffer.getvalue()).decode()}) == {"main.py": GOOD_PY, long_path: b"X = 1\n"}


def test_a_url_and_a_source_together_or_a_body_over_3_mib_are_refused(api):
    both = api.post("/bots", token=ADMIN, json={
        "name": "both", "games": ["aladino"], "url": "http://127.0.0.1:9/",
        "source": source("python3")})
    assert both.status_code == 400
    huge = api.post("/bots", token=ADMIN, json={
        "name": "huge", "games": ["aladino"],
        "source": {"language": "python3", "files": {"main.py": "x" * (3 << 20)}}})
    assert huge.status_code == 413


def test_a_push_bot_takes_no_source_and_a_hosted_bot_no_url(api, node_bot_url):
    push = api.register_bot(node_bot_url, name="pushy")
    refused = api.request("PATCH", f"/bots/{push}", token=ADMIN,
                          json={"source": source("python3")})
    assert refused.status_code == 422
    hosted = upload(api, "python3", "uploaded")["id"]
    refused = api.request("PATCH", f"/bots/{hosted}", token=ADMIN,
                          json={"url": "http://127.0.0.1:9/"})
    assert refused.status_code == 422


def test_builds_and_stderr_are_the_owners_and_the_admins(api):
    """Contract: GET /bots/{id}/build and /matches/{id}/stderr: the owner, the admin."""
    owner = api.post("/accounts", token=ADMIN, json={"name": "owner"}).get_json()["token"]
    other = api.post("/accounts", token=ADMIN, json={"name": "other"}).get_json()["token"]
    bot = upload(api, "python3", "private-build", token=owner)["id"]
    assert api.get(f"/bots/{bot}/build", token=owner).status_code == 200
    assert api.get(f"/bots/{bot}/build", token=other).status_code == 403
    assert api.get(f"/bots/{bot}/build").status_code == 401
    assert api.get(f"/bots/{bot}").get_json()["status"] == "building"
    match = api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}])["id"]
    assert api.get(f"/matches/{match}/stderr?seat=0").status_code == 401
    assert api.get(f"/matches/{match}/stderr?seat=0", token=ADMIN).status_code == 404
    assert api.get(f"/matches/{match}/stderr?seat=x", token=ADMIN).status_code == 400


FORGER = r"""
import json, os, sys

FORGERIES = ["\n", "\r", "\u2028", "\x85", "\x1c", "\x1b[2K\r"]  # each then a fake note


def erase_and_forge():
    for erase in (lambda: os.ftruncate(2, 0),
                  lambda: open("/proc/self/fd/2", "w").close()):  # O_TRUNC
        try:
            erase()
        except OSError:
            pass
    for number, before in enumerate(FORGERIES):
        sys.stderr.write(f"line {number}{before}[sandbox 00:00:00] FORGED {number}: stopped\n")
    sys.stderr.write("[referee] FORGED: ... 0 bytes left out ...\n")
    sys.stderr.flush()


for count, line in enumerate(sys.stdin):
    message = json.loads(line)
    if message.get("type", "decision") == "decision":
        if count == 0:
            erase_and_forge()
        print(json.dumps({"action": message["legal_actions"][0]}), flush=True)
"""


def test_a_program_can_neither_erase_nor_forge_the_sandboxs_notes_in_its_stderr(api, workers):
    """Attack: at its first decision the program truncates its stderr (`ftruncate(2)`,
    `/proc/self/fd/2` opened with O_TRUNC), then writes lines made to look like the
    sandbox's notes, after a newline and after each other character a reader may take for
    the end of a line. What the owner reads still starts with the note of the program's
    start and ends with that of its exit, and no line the program wrote starts as a note
    does (with `[`)."""
    workers.start_ready(1, hosted=True)
    match_id = against_an_honest_bot(api, "forger", FORGER)
    assert finished(api, match_id)["status"] == "finished"
    text = wait_for(lambda: (answer := api.get(f"/matches/{match_id}/stderr?seat=0",
                                               token=ADMIN)).status_code == 200 and answer,
                    what="the stderr").get_data(as_text=True)
    lines = text.splitlines()
    notes = [line for line in lines if line.startswith("[")]
    assert "started pid" in notes[0] and "stopped: exited with code 0" in notes[-1], text
    assert notes[0] == lines[0] and notes[-1] == lines[-1], text
    forged = [line for line in lines if "FORGED" in line]
    assert len(forged) == 7 and not [line for line in forged if line.startswith("[")], text


def test_a_workers_cache_of_builds_keeps_within_its_bound(api, workers):
    """Contract: a hosted worker keeps at most REFEREE_HOSTED_CACHE_BUILDS builds that no
    seat runs unpacked in REFEREE_HOSTED_DIR, the least recently used going first: after
    the matches of three bots, one after the other, the cache holds the last one's build
    only (before: every build ever played, for good)."""
    cache = Path(tempfile.mkdtemp(prefix="referee-cache-test-"))
    cache.chmod(0o755)  # the sandbox uid passes through to the builds
    try:
        workers.start_ready(1, hosted=True, REFEREE_HOSTED_DIR=str(cache),
                            REFEREE_HOSTED_CACHE_BUILDS="1")
        bots = [upload(api, "python3", f"cached-{number}")["id"] for number in range(3)]
        for bot in bots:
            assert settled(api, bot)["status"] == "ready"
        for bot in bots:
            match_id = api.create_match("aladino", bot_seats([bot, bot]),
                                        deadline_ms=10_000)["id"]
            assert finished(api, match_id)["status"] == "finished"
            for seat in (0, 1):  # kept once the seat's program is stopped, its build released
                wait_for(lambda seat=seat, match_id=match_id: api.get(
                    f"/matches/{match_id}/stderr?seat={seat}", token=ADMIN).status_code == 200,
                         what="the stderr")
            unpacked = [entry.name for entry in (cache / "builds").iterdir() if entry.is_dir()]
            assert [name.startswith(f"{bot}-1-") for name in unpacked] == [True], unpacked
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def test_a_match_whose_build_the_disk_cannot_hold_waits_and_plays_once_it_can(api, workers):
    """A full or unwritable disk under REFEREE_HOSTED_DIR: the match is deferred (neither
    failed, nor held by the worker retrying for good) and plays once the disk takes the
    build."""
    cache = Path(tempfile.mkdtemp(prefix="referee-cache-test-"))
    cache.chmod(0o755)
    try:
        (cache / "builds").write_text("")  # the builds folder cannot be made
        workers.start_ready(1, hosted=True, REFEREE_HOSTED_DIR=str(cache))
        bot = upload(api, "python3", "homeless")["id"]
        assert settled(api, bot)["status"] == "ready"
        match_id = api.create_match("aladino", bot_seats([bot, bot]), deadline_ms=10_000)["id"]
        wait_for(lambda: "deferred: the hosted builds cache" in workers.logs(),
                 what="the match deferred")
        assert api.get(f"/matches/{match_id}", token=ADMIN).get_json()["status"] in (
            "queued", "running")
        (cache / "builds").unlink()
        assert finished(api, match_id)["status"] == "finished"
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def test_a_hosted_bot_does_not_enter_a_ladder_yet(api):
    ladder = api.post("/ladders", token=ADMIN, json={
        "name": "l", "game": "aladino", "players": 2, "seed": 1}).get_json()
    bot = upload(api, "python3", "climber")["id"]
    refused = api.post(f"/ladders/{ladder['id']}/entries", token=ADMIN, json={"bot": bot})
    assert refused.status_code == 422
    assert "hosted" in str(refused.get_json()["errors"])


# a python3 build runs `python3 -m py_compile main.py` in the bot's folder, where a
# `py_compile.py` of the bot's is the module run: code at build time, as perl's BEGIN is
BUILDS_LEAVING_TOO_MUCH = {
    "sparse files": "for i in range(8):\n    open(f'big{i}', 'wb').truncate(16 << 20)\n",
    "a tree 3,000 deep": "import os\nfor _ in range(3000):\n    os.mkdir('d')\n    os.chdir('d')\n",
    "6,000 files": "for i in range(6000):\n    open(f'f{i}', 'w').close()\n",
}


@pytest.mark.parametrize("case", sorted(BUILDS_LEAVING_TOO_MUCH))
def test_a_build_leaving_too_much_fails_and_leaves_nothing_behind(case, monkeypatch):
    """What a build leaves is bounded before it is packed: sparse files (16 MiB each that
    cost the build nothing, and every worker playing it 16 MiB of disk), a tree deeper
    than the packer's recursion (which then left the build's folder in /dev/shm for good),
    too many files. (Before: the sparse files were `ready`, the deep tree an error.)"""
    made: list[str] = []
    real_mkdtemp = tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda **kw: made.append(real_mkdtemp(**kw))
                        or made[-1])
    source = hosted.pack({"main.py": GOOD_PY,
                          "py_compile.py": BUILDS_LEAVING_TOO_MUCH[case].encode()})
    outcome = asyncio.run(hosted._build_in_sandbox(sandbox.languages()["python3"], source,
                                                   sandbox.Limits()))
    assert outcome["status"] == "build_failed", outcome.get("log")
    assert "the build" in outcome["log"], outcome["log"]
    assert made and not os.path.exists(made[0])


def test_every_entry_file_is_the_one_the_sandbox_runs():
    for language, entry in ENTRY.items():
        assert sandbox.entry_file(language) == entry


def test_the_same_files_pack_to_the_same_bytes_at_any_time(monkeypatch):
    """A source's sha256 names its files: packed at another time, it must not change (a
    gzip header carries a time unless told not to), or the same upload is a new version."""
    files = {"main.py": GOOD_PY, "lib/util.py": b"X = 1\n"}
    monkeypatch.setattr(time, "time", lambda: 1_000_000_000.0)
    before = hosted.pack(files)
    monkeypatch.setattr(time, "time", lambda: 2_000_000_000.0)
    assert hosted.pack(files) == before


LINGERER = r"""
import json, sys, time

for line in sys.stdin:
    message = json.loads(line)
    if message.get("type", "decision") == "decision":
        time.sleep(0.2)
        print(json.dumps({"action": message["legal_actions"][0]}), flush=True)
time.sleep(0.3)  # stdin closed: the worker is stopping this program
print("said goodbye", file=sys.stderr, flush=True)
"""


def test_a_worker_stopping_stops_its_hosted_programs_and_keeps_their_stderr(api, workers):
    """SIGTERM hands a worker's matches back; the programs of their hosted seats are
    stopped as at a match's end (stdin closed, STOP_GRACE_S to exit) and what they wrote is
    kept. The worker's loop stopped first: the programs died with the worker, their
    stderr lost. (Stdin may close while the program answers a decision, and the machine
    may be loaded: it may be killed at the grace's end rather than exit in it, a stop
    too.)"""
    (proc,) = workers.start_ready(1, hosted=True)
    match_id = against_an_honest_bot(api, "lingerer", LINGERER)
    wait_for(lambda: api.get(f"/matches/{match_id}", token=ADMIN).get_json()["step"] >= 2,
             what="the match under way")
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=60)
    assert api.get(f"/matches/{match_id}", token=ADMIN).get_json()["status"] == "queued"
    kept = api.app.extensions["referee"].store.match_stderr(match_id, 0)
    assert kept is not None, workers.logs()
    text = kept.decode()
    assert "said goodbye" in text, text
    assert re.search(r"stopped: exited with code 0|killed: still running 1 s after", text), text
