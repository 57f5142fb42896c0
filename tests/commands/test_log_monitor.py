"""`referee log monitor URL [--state FILE] [--full]` (issue 25): the results log's auditor,
run in this process against the app served over HTTP, on a log of matches played to their
end by the worker's driver in this process. Exit 0 when everything holds (the state is
saved), 1 on an inconsistency (one `INCONSISTENT:` line naming the entry, nothing saved), 2
when the server or the state file cannot be read. Each history rewrite below is done in
Redis the way a rogue operator would: consistently, so that the server serves a log and
records that hold together by themselves, and only what the monitor kept shows it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import redis

from referee.cli import main
from referee.match import compact, replay
from referee.match.sealing import SigningKey, b64url
from referee.monitor import MonitorState
from tests.support.apitest import SECRET, drive_match, two_player_options
from tests.support.loopback import serving
from tournament.store import Store
from tournament.store.keys import (
    PREFIX,
    MatchField,
    MatchPart,
    log_head_key,
    log_ids_key,
    log_level_key,
    match_key,
    signing_keys_key,
)

GAMES = ("aladino", "caravans")
HASH_BYTES = 32

Monitor = Callable[..., tuple[int, str, str]]


# ----- fixtures and helpers ------------------------------------------------------------------


@pytest.fixture
def db(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
def play(api, redis_url: str, bot_server) -> Callable[[int], list[str]]:
    """`play(n)`: n more matches between random bots (Aladino and Caravans in turn), each
    played to its end (and so logged) in this process; their ids, in log order."""
    bots = [api.register_bot(bot_server.url("/random"), name=f"random {n}") for n in range(2)]
    played: list[str] = []

    def more(count: int) -> list[str]:
        ids = []
        for _ in range(count):
            game = GAMES[len(played) % len(GAMES)]
            match = api.create_match(game, [{"kind": "bot", "bot_id": bot} for bot in bots],
                                     options=two_player_options(game), deadline_ms=5000)
            assert drive_match(redis_url, match["id"], SECRET)["status"] == "finished"
            played.append(match["id"])
            ids.append(match["id"])
        return ids

    return more


@pytest.fixture
def state_file(tmp_path: Path) -> Path:
    return tmp_path / "state" / "monitor.json"


@pytest.fixture
def monitor(app_url: str, state_file: Path, capsys) -> Monitor:
    """`monitor(*extra, state=state_file, url=app_url)`: run `referee log monitor` in this
    process; (exit status, stdout, stderr)."""

    def run(*extra: str, state: Path = state_file, url: str = app_url) -> tuple[int, str, str]:
        capsys.readouterr()
        status = main(["log", "monitor", url, "--state", str(state), *extra])
        out, err = capsys.readouterr()
        return status, out, err

    return run


def checked(out: str) -> int:
    """The number of records a passing run says it checked."""
    line = next(line for line in out.splitlines() if line.startswith("log of "))
    return int(line.rsplit(", ", 1)[1].removesuffix(" records checked"))


def assert_inconsistent(result: tuple[int, str, str], *naming: str) -> str:
    """Exit 1 with one `INCONSISTENT:` line on stderr that contains every `naming`; the line."""
    status, out, err = result
    assert status == 1, (out, err)
    assert err.startswith("INCONSISTENT: ") and err.count("\n") == 1, err
    for part in naming:
        assert part in err, err
    return err


def entry(index: int, match_id: str) -> str:
    """How the monitor names an entry."""
    return f"entry {index} (match {match_id})"


def replay_key(match_id: str) -> str:
    return match_key(match_id, MatchPart.REPLAY)


def stored_record(db: redis.Redis, match_id: str) -> dict:
    return compact.decode(db.get(replay_key(match_id)))


def change_record(db: redis.Redis, match_id: str, change: str) -> None:
    """Rewrite the stored replay of `match_id` with one field changed, in its stored form."""
    record = stored_record(db, match_id)
    if change == "finished_at":
        record["finished_at"] = "2001-02-03T04:05:06.000Z"
    else:
        record["result"]["scores"][0] += 1
    db.set(replay_key(match_id), compact.encode(record))


def log_ids(db: redis.Redis) -> list[str]:
    return [raw.decode() for raw in db.lrange(log_ids_key(), 0, -1)]


def rewrite_log(db: redis.Redis, ids: list[str]) -> None:
    """Make the log the leaves of `ids` in that order, as a rogue operator would: the leaves
    and ids rewritten together, every upper level and the cached head dropped (the server
    recomputes and signs them), and each match's `log` field its new index."""
    leaves = db.get(log_level_key(0)) or b""
    leaf_of = {match_id: leaves[n * HASH_BYTES:(n + 1) * HASH_BYTES]
               for n, match_id in enumerate(log_ids(db))}
    upper = [key for key in db.scan_iter(match=f"{PREFIX}log:level:*")
             if key != log_level_key(0).encode()]
    with db.pipeline() as pipe:
        pipe.set(log_level_key(0), b"".join(leaf_of[match_id] for match_id in ids))
        pipe.delete(log_ids_key(), log_head_key(), *upper)
        pipe.rpush(log_ids_key(), *ids)
        for match_id in leaf_of.keys() - set(ids):
            pipe.hdel(match_key(match_id), MatchField.LOG)
        for index, match_id in enumerate(ids):
            pipe.hset(match_key(match_id), MatchField.LOG, index)
        pipe.execute()


# ----- a log that only grows ---------------------------------------------------------------


def test_runs_pass_and_each_checks_only_the_records_logged_since_the_last(
        play, monitor, state_file, app_url):
    """Issue 25: a first run on a log of a few finished matches exits 0 and saves the state;
    a second run with no change exits 0; after 2 more matches finish, the next run exits 0
    and checks only the 2 new records."""
    play(4)
    status, out, err = monitor()
    assert status == 0, err
    assert checked(out) == 4
    assert f"OK: head of 4 entries saved to {state_file}" in out
    saved = json.loads(state_file.read_text())
    assert saved["url"] == app_url and saved["tree_size"] == 4 and saved["keys"]

    status, out, err = monitor()
    assert status == 0, err
    assert checked(out) == 0
    assert json.loads(state_file.read_text())["tree_size"] == 4

    play(2)
    status, out, err = monitor()
    assert status == 0, err
    assert checked(out) == 2
    assert "6 entries" in out and json.loads(state_file.read_text())["tree_size"] == 6

    status, out, err = monitor("--full")
    assert status == 0, err
    assert checked(out) == 6


# ----- a record since the last run deleted, replaced or changed -----------------------------


def test_a_deleted_record_fails_the_next_run_naming_its_entry(play, monitor, db):
    """Issue 25: deleting a record logged since the monitor's last run (the match and its
    replay: the server answers 404) makes the next run fail, naming the entry."""
    play(2)
    assert monitor()[0] == 0
    new = play(2)
    db.delete(replay_key(new[0]), match_key(new[0]))
    assert_inconsistent(monitor(), entry(2, new[0]), "deleted")


def test_a_record_whose_replay_alone_is_deleted_fails_the_next_run_naming_its_match(
        play, monitor, db, state_file):
    """Issue 25: deleting a record logged since the last run, its replay only (the match
    stays finished; the server answers 503 replay/unavailable) makes the next run fail,
    naming the match, and saves nothing."""
    play(2)
    assert monitor()[0] == 0
    saved = state_file.read_bytes()
    new = play(1)
    db.delete(replay_key(new[0]))
    status, out, err = monitor()
    # Today a 503 is "the server cannot be read" (exit 2), not an inconsistency (exit 1).
    assert status in (1, 2), (out, err)
    assert new[0] in err and err.count("\n") == 1, err
    assert state_file.read_bytes() == saved


@pytest.mark.parametrize("renamed", [False, True], ids=["as-is", "renamed"])
def test_a_replaced_record_fails_the_next_run_naming_its_entry(play, monitor, db, renamed):
    """Issue 25: replacing a record logged since the last run (another finished match's
    stored replay under this match's key, as it is or with this match's id) makes the next
    run fail, naming the entry."""
    play(2)
    assert monitor()[0] == 0
    other, victim = play(2)
    if renamed:
        db.set(replay_key(victim), compact.encode({**stored_record(db, other),
                                                   "match_id": victim}))
    else:
        db.set(replay_key(victim), db.get(replay_key(other)))
    assert_inconsistent(monitor(), entry(3, victim))


@pytest.mark.parametrize("change", ["finished_at", "score"])
def test_a_changed_record_fails_the_next_run_naming_its_entry(play, monitor, db, change):
    """Issue 25: changing a record logged since the last run (its `finished_at`, or a result
    score, in its stored form) makes the next run fail, naming the entry."""
    play(2)
    assert monitor()[0] == 0
    new = play(2)
    change_record(db, new[1], change)
    assert_inconsistent(monitor(), entry(3, new[1]), "does not hash to its leaf")


def test_an_older_changed_record_passes_a_plain_run_and_fails_a_full_one(play, monitor, db):
    """Issue 25: a record logged before the last run, changed: the next plain run passes (it
    checks only the new records), the next `--full` run fails naming that entry."""
    old = play(3)
    assert monitor()[0] == 0
    change_record(db, old[1], "finished_at")
    play(1)
    status, out, err = monitor()
    assert status == 0, err
    assert checked(out) == 1
    assert_inconsistent(monitor("--full"), entry(1, old[1]), "does not hash to its leaf")


# ----- the log itself rewritten ------------------------------------------------------------


@pytest.mark.parametrize(("rewrite", "after", "said"), [
    ("removed", 0, "shrank"),
    ("removed", 2, "no consistency"),
    ("reordered", 0, "another root"),
    ("reordered", 1, "no consistency"),
    ("inserted", 0, "no consistency"),
], ids=["removed", "removed-then-2-more", "reordered", "reordered-then-1-more", "inserted"])
def test_a_leaf_removed_reordered_or_inserted_fails_the_next_run(
        play, monitor, db, tmp_path, rewrite, after, said):
    """Issue 25: removing, reordering (two leaves swapped) or inserting a leaf in the log
    seen by the last run (an unlogged match's leaf put among the old ones) makes the next
    run fail, also when more matches finished after the rewrite. The rewritten log holds
    together by itself: a monitor with no state passes it."""
    ids = play(4)
    assert monitor()[0] == 0
    if rewrite == "removed":
        rewrite_log(db, [ids[0], *ids[2:]])
    elif rewrite == "reordered":
        rewrite_log(db, [ids[0], ids[2], ids[1], ids[3]])
    else:
        (late,) = play(1)
        rewrite_log(db, [ids[0], late, *ids[1:]])
    play(after)
    status, _, err = monitor(state=tmp_path / "fresh.json")
    assert status == 0, err
    assert_inconsistent(monitor(), said)
    assert_inconsistent(monitor("--full"), said)


# ----- the keys ----------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["gone", "changed"])
def test_a_key_seen_before_gone_or_changed_fails_the_next_run(play, monitor, db, redis_url,
                                                              state_file, how):
    """Issue 25: a key seen by the last run that disappears from GET /keys (HDEL from the
    `signing-keys` hash), or whose public key changes, makes the next run fail."""
    retired = SigningKey.generate()
    Store.from_url(redis_url).publish_key(retired.key_id, b64url(retired.public_raw),
                                          replay.utc_now(), current=False)
    play(2)
    status, out, err = monitor()
    assert status == 0, err
    assert retired.key_id in json.loads(state_file.read_text())["keys"]
    if how == "gone":
        db.hdel(signing_keys_key(), retired.key_id)
    else:
        entry_json = json.loads(db.hget(signing_keys_key(), retired.key_id))
        entry_json["public_key"] = b64url(SigningKey.generate().public_raw)
        db.hset(signing_keys_key(), retired.key_id, json.dumps(entry_json))
    assert_inconsistent(monitor(), f"key {retired.key_id}", how)


# ----- the state file ----------------------------------------------------------------------


@pytest.mark.parametrize("content", ["another-server", "not-json", "not-a-state"])
def test_a_state_file_of_another_server_or_unreadable_exits_2(monitor, state_file, content):
    """Issue 25: a state file of another server URL, or unreadable (not JSON, not a state),
    exits 2 and is left as it was."""
    state_file.parent.mkdir(parents=True)
    if content == "another-server":
        MonitorState("http://referee.example.org").save(state_file)
    else:
        state_file.write_text("{not json" if content == "not-json" else '{"size": 3}')
    before = state_file.read_bytes()
    status, out, err = monitor()
    assert status == 2, (out, err)
    assert err.startswith("error: the state file ") and err.count("\n") == 1, err
    assert state_file.read_bytes() == before


def test_a_failed_run_leaves_the_state_file_unchanged(play, monitor, db, state_file):
    """Issue 25: after a failed run the state file is unchanged (nothing saved), and the
    failure is found again by the run after."""
    play(2)
    assert monitor()[0] == 0
    saved = state_file.read_bytes()
    new = play(2)
    change_record(db, new[0], "finished_at")
    files = sorted(state_file.parent.iterdir())
    for _ in range(2):
        assert_inconsistent(monitor(), entry(2, new[0]))
        assert state_file.read_bytes() == saved
        assert sorted(state_file.parent.iterdir()) == files


class _NotAReferee(BaseHTTPRequestHandler):
    """Answers /keys with no key and /log/head with something that is no tree head."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = b'{"keys": []}' if self.path == "/keys" else b'{"tree_size": "many"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        """Quiet."""


def test_a_server_answering_no_tree_head_is_unreadable_not_a_crash(tmp_path, capsys):
    """Exit 2 with one line, nothing saved, for a head of the wrong shape (here a server
    that publishes no key, so no signature check would catch it)."""
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), _NotAReferee)) as port:
        state = tmp_path / "state.json"
        assert main(["log", "monitor", f"http://127.0.0.1:{port}", "--state", str(state)]) == 2
    assert "answered no tree head" in capsys.readouterr().err and not state.exists()
