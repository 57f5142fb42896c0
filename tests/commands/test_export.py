"""`referee export --game G [--since T] [--format ndjson|parquet] OUT` (issue 30) on the real
Redis: every decision of every finished match of the game (the operator's view: deals not
yet public included), the same records as the API's admin pages, `--since`, `--cursor`,
`--jobs`, a Parquet file that reads back to the same records, and bad arguments."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from referee.cli import main
from tests.support.apitest import ADMIN, ROOT
from tests.support.decision_records import (
    bot_seat,
    create,
    play,
    play_keeping,
    read_ndjson,
    store_played,
)
from tournament.store.keys import MatchPart, match_key


@pytest.fixture
def redis_env(redis_url, monkeypatch) -> str:
    """REDIS_URL set for `referee` to the test Redis."""
    monkeypatch.setenv("REDIS_URL", redis_url)
    return redis_url


@pytest.fixture
def stored(api, redis_env, redis_url):
    """Aladino matches (one of a deal still in play, one with a pull seat, one from
    January, stored with the decisions its driver kept) and a Caravans match, stored as
    finished."""
    store = api.app.extensions["referee"].store
    seats = [bot_seat("bot-a"), bot_seat("bot-b", 4)]
    january, kept = play_keeping("aladino", 1, seats, "m-jan",
                                 finished_at="2026-01-05T10:00:00.000Z")
    made = [
        store_played(store, redis_url, january, kept=kept),
        store_played(store, redis_url, play("aladino", 2, seats, "m-dealt"), ["m-later"]),
        store_played(store, redis_url, play("caravans", 3, seats, "m-caravans")),
        store_played(store, redis_url, play("aladino", 4, [bot_seat("bot-a"), bot_seat(None)],
                                            "m-pull")),
    ]
    create(store, play("aladino", 2, seats[::-1], "m-later"), ["m-dealt"])
    return made


def referee(*args: str) -> int:
    return main(["export", *args])


def test_every_decision_of_the_game_as_the_admin_reads_them(api, stored, tmp_path, capsys):
    out = tmp_path / "aladino.ndjson"
    assert referee("--game", "aladino", str(out)) == 0
    written = out.read_bytes()
    assert written == api.get("/export/aladino", token=ADMIN).data
    found = read_ndjson(written)
    assert [(r["match_id"], r["step"]) for r in found] == [
        (record["match_id"], step["step"]) for record in stored
        if record["game"] == "aladino" for step in record["steps"]]
    report = capsys.readouterr().err
    assert f"exported {len(found)} records of 3 matches to {out}" in report
    cursor = report.rsplit("cursor: ", 1)[1].strip()
    # it ended at the end (an empty page: read without openapi-core, which calls it missing)
    after = api.client.get(f"/export/aladino?cursor={cursor}")
    assert after.status_code == 200 and after.data == b""

    assert referee("--game", "aladino", "--jobs", "2", str(tmp_path / "two.ndjson")) == 0
    assert (tmp_path / "two.ndjson").read_bytes() == written


def test_since_and_cursor_narrow_the_export(api, stored, tmp_path):
    for since in ("2026-02-01", "1769904000"):
        out = tmp_path / f"since-{since}.ndjson"
        assert referee("--game", "aladino", "--since", since, str(out)) == 0
        assert {r["match_id"] for r in read_ndjson(out.read_bytes())} == {"m-dealt", "m-pull"}
    page = api.get("/export/aladino?limit=10", token=ADMIN)
    rest = tmp_path / "rest.ndjson"
    cursor = page.headers["Referee-Next-Cursor"]
    assert referee("--game", "aladino", "--cursor", cursor, str(rest)) == 0
    whole = api.get("/export/aladino", token=ADMIN).data
    assert page.data + rest.read_bytes() == whole


JSON_FIELDS = ("action", "legal_actions", "observation")  # JSON text in a Parquet file


def test_a_parquet_file_reads_back_to_the_same_records(stored, tmp_path):
    assert referee("--game", "aladino", str(tmp_path / "a.ndjson")) == 0
    assert referee("--game", "aladino", "--format", "parquet", str(tmp_path / "a.parquet")) == 0
    rows = pq.read_table(tmp_path / "a.parquet").to_pylist()
    from_parquet = [{name: json.loads(value) if name in JSON_FIELDS and value is not None
                     else value for name, value in row.items()} for row in rows]
    assert from_parquet == read_ndjson((tmp_path / "a.ndjson").read_bytes())
    assert any(row["bot_id"] is None and row["bot_version"] is None for row in rows)


def test_standard_output_through_python_dash_m(stored, redis_url, tmp_path):
    """One process, and two whose payloads the parent copies from their spool files into a
    pipe: the same bytes, and no spool file left behind."""
    outputs = []
    for jobs in ("1", "2"):
        done = subprocess.run([sys.executable, "-m", "referee", "export", "--game", "aladino",
                               "--jobs", jobs, "-"],
                              cwd=ROOT, capture_output=True, timeout=60,
                              env={**os.environ, "REDIS_URL": redis_url, "PYTHONPATH": str(ROOT),
                                   "TMPDIR": str(tmp_path)})
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert {r["match_id"] for r in read_ndjson(outputs[0])} == {"m-jan", "m-dealt", "m-pull"}
    assert outputs[1] == outputs[0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("args", "message"), [
    (["--game", "chess"], "unknown game 'chess'"),
    (["--game", "aladino", "--since", "last week"], "--since: 'last week' is neither"),
    (["--game", "aladino", "--cursor", "nonsense"], "--cursor: not a cursor"),
    (["--game", "aladino", "--jobs", "0"], "--jobs must be at least 1"),
    (["--game", "aladino", "--format", "parquet", "-"], "writes a file"),
])
def test_bad_arguments_are_one_line_and_exit_2(redis_env, tmp_path, capsys, args, message):
    out = tmp_path / "never.ndjson"
    assert referee(*args, *([] if args[-1] == "-" else [str(out)])) == 2
    error = capsys.readouterr().err
    assert error.startswith("referee: error: ") and message in error and error.count("\n") == 1
    assert not out.exists() and not list(tmp_path.iterdir())


def test_parquet_without_pyarrow_says_how_to_get_it(redis_url, tmp_path):
    """pyarrow is the `export` extra: where it is not installed (here: kept from being
    imported), `--format parquet` is refused in one line."""
    code = ("import sys; sys.modules['pyarrow'] = None; from referee.cli import main; "
            f"sys.exit(main(['export', '--game', 'aladino', '--format', 'parquet', "
            f"{str(tmp_path / 'x.parquet')!r}]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60,
                          env={**os.environ, "REDIS_URL": redis_url, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2
    assert done.stderr == ("referee: error: --format parquet needs pyarrow: pip install "
                           "'game-referee[export]' (or write ndjson)\n")


def test_an_unreachable_redis_is_one_line_and_exit_1(refused_url, tmp_path, monkeypatch,
                                                    capsys):
    monkeypatch.setenv("REDIS_URL", refused_url.replace("http://", "redis://").removesuffix(
        "/bot"))
    assert referee("--game", "aladino", str(tmp_path / "x.ndjson")) == 1
    assert capsys.readouterr().err.startswith("referee: error: ")
    assert not list(tmp_path.iterdir())


def test_a_workers_matches_export_from_the_decisions_it_kept(api, bot_server, redis_env,
                                                             redis_url, run_worker, tmp_path,
                                                             monkeypatch):
    """Matches a real worker played: by default nothing more is stored; under
    REFEREE_KEEP_DECISIONS_S each is stored with the decisions its driver kept, for that
    long, and their export is the same bytes as when every match is played again."""
    store = api.app.extensions["referee"].store
    bots = [api.register_bot(bot_server.url("/random"), name=name) for name in ("r1", "r2")]

    def played(seeds: tuple[int, ...]) -> list[str]:
        ids = [api.create_match("caravans", [{"kind": "bot", "bot_id": bot} for bot in bots],
                                seed=seed)["id"] for seed in seeds]
        run_worker(120)
        assert [match["status"] for match in store.get_matches(ids)] == ["finished"] * len(ids)
        return ids

    first = played((1,))
    assert not store.redis.exists(match_key(first[0], MatchPart.DECISIONS))
    monkeypatch.setenv("REFEREE_KEEP_DECISIONS_S", "600")
    ids = played((2, 3, 4))
    kept = [match_key(match_id, MatchPart.DECISIONS) for match_id in ids]
    assert store.redis.exists(*kept) == 3
    assert all(0 < store.redis.ttl(key) <= 600 for key in kept)
    from_kept, played_again = tmp_path / "kept.ndjson", tmp_path / "again.ndjson"
    assert referee("--game", "caravans", str(from_kept)) == 0
    assert store.redis.delete(*kept) == 3
    assert referee("--game", "caravans", str(played_again)) == 0
    assert len(read_ndjson(from_kept.read_bytes())) == sum(
        len(store.get_replay_steps(match_id)["steps"]) for match_id in [*first, *ids])
    assert from_kept.read_bytes() == played_again.read_bytes()
