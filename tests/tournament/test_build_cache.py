"""The hosted workers' cache of builds (`tournament.build_cache`) with real builds (uploaded,
built in the sandbox, stored in Redis), real sandboxes running them, and a second process
sharing the cache as a second worker of the machine would."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

import engines
from referee.match import sandbox
from referee.match.runner import state_payload
from tests.support.apitest import ADMIN, ROOT
from tests.support.hosted import reachable_folder, source
from tournament import hosted
from tournament.build_cache import (
    Bounds,
    CacheFailed,
    Lease,
    UnsafeCacheRoot,
    cache_root,
    check_out,
)
from tournament.store import Store

MANY = 1 << 40
PADDING = 300_000  # bytes of data a "big" bot carries


@pytest.fixture
def cache() -> Iterator[Path]:
    with reachable_folder("referee-cache-test-") as folder:
        yield folder


@pytest.fixture
def store(redis_url) -> Store:
    return Store.from_url(redis_url)


@pytest.fixture
def build(api, store) -> Callable[..., str]:
    """Upload python3 bots (`padded`: with PADDING bytes of data) and build them in the
    sandbox; each one's id."""
    def built(name: str, padded: bool = False) -> str:
        files = dict(source("python3")["files"])
        if padded:
            files["data.txt"] = "x" * PADDING
        response = api.post("/bots", token=ADMIN, json={
            "name": name, "games": engines.names(),
            "source": {"language": "python3", "files": files}})
        assert response.status_code == 201, response.get_json()
        asyncio.run(hosted.run_builds(store, sandbox.Limits(), "test", asyncio.to_thread))
        bot = response.get_json()["id"]
        assert store.bot_build(bot, 1)["status"] == "ready"
        return bot

    return built


def unpacked(cache: Path) -> list[str]:
    """The bots whose builds are in the cache, by name."""
    return sorted(entry.name.split("-1-")[0] for entry in (cache / "builds").iterdir()
                  if entry.is_dir() and not entry.name.startswith("."))


def used(store: Store, cache: Path, bot: str, bounds: Bounds) -> None:
    """Check a bot's build out and release it, as a seat that ran it."""
    lease = check_out(store, cache, bot, 1, bounds)
    assert isinstance(lease, Lease), lease
    lease.release()


def in_another_process(redis_url: str, cache: Path, code: str) -> subprocess.Popen:
    """`code` run by another Python process, with `store`, `cache`, `check_out` and `Bounds`
    at hand (a second worker of the machine)."""
    script = textwrap.dedent("""
        import sys
        from pathlib import Path
        from tournament.build_cache import Bounds, check_out
        from tournament.store import Store
        store, cache = Store.from_url(sys.argv[1]), Path(sys.argv[2])
    """) + textwrap.dedent(code)
    return subprocess.Popen([sys.executable, "-c", script, redis_url, str(cache)], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def finished(process: subprocess.Popen) -> str:
    out, _ = process.communicate(timeout=120)
    assert process.returncode == 0, out
    return out


def test_the_least_recently_used_builds_go_first(build, store, cache):
    """At most `builds` builds no seat runs: a new one evicts the one used longest ago;
    one evicted is unpacked again when it is used again."""
    bounds = Bounds(builds=2, bytes=MANY)
    first, second, third = (build(name) for name in ("first", "second", "third"))
    for bot in (first, second, third):
        used(store, cache, bot, bounds)
    assert unpacked(cache) == sorted([second, third])
    used(store, cache, first, bounds)  # second is now the least recently used
    assert unpacked(cache) == sorted([third, first])
    used(store, cache, third, bounds)
    used(store, cache, second, bounds)
    assert unpacked(cache) == sorted([third, second])
    locks = sorted(path.name for path in (cache / "builds").iterdir() if not path.is_dir())
    assert [name.split("-1-")[0] for name in locks] == unpacked(cache)  # no lock left over


def test_the_cache_keeps_within_its_bytes(build, store, cache):
    """At most `bytes` of files in the builds no seat runs."""
    big, bigger, small = build("big", padded=True), build("bigger", padded=True), build("s")
    bounds = Bounds(builds=100, bytes=PADDING + PADDING // 2)
    used(store, cache, big, bounds)
    used(store, cache, bigger, bounds)
    assert unpacked(cache) == [bigger]
    used(store, cache, small, bounds)
    assert unpacked(cache) == sorted([bigger, small])


def test_a_build_a_sandbox_runs_is_never_evicted_by_any_process(build, store, cache,
                                                                  redis_url):
    """A seat of this process runs its build in a sandbox while another process, sharing
    the cache, uses two more builds under a bound of one: the running build stays (and its
    program answers on), the other process's builds take turns; released, it goes."""
    bounds = Bounds(builds=1, bytes=MANY)
    running, second, third = (build(name) for name in ("running", "second", "third"))
    engine = engines.get("aladino")
    state = engine.new_game(num_players=2, seed=7, options={})
    payload = orjson.dumps(state_payload(engine, state, "m-cache", engine.current_seat(state),
                                         0, 5000))

    async def play() -> tuple[list[dict], list[str]]:
        lease = check_out(store, cache, running, 1, bounds)
        assert isinstance(lease, Lease), lease
        program = await sandbox.HostedProgram.start(sandbox.languages()["python3"],
                                                    lease.folder, sandbox.Limits())
        try:
            answers = [json.loads(await program.ask(payload, 20))]
            other = in_another_process(redis_url, cache, f"""
                for bot in {[second, third]!r}:
                    check_out(store, cache, bot, 1, Bounds(1, {MANY})).release()
            """)
            await asyncio.to_thread(finished, other)
            during = unpacked(cache)
            answers.append(json.loads(await program.ask(payload, 20)))
        finally:
            await program.stop(None, 1)
            lease.release()
        return answers, during

    answers, during = asyncio.run(play())
    assert answers == [{"action": json.loads(payload)["legal_actions"][0]}] * 2
    assert during == sorted([running, third])
    used(store, cache, second, bounds)
    assert unpacked(cache) == [second]


def test_a_lease_goes_with_its_process_and_what_a_killed_one_left_is_removed(
        build, store, cache, redis_url):
    """A process killed while it holds a build (kill -9): the kernel drops its lock, so
    the build may go. What killed processes leave midway (a build being unpacked that no
    one holds, one being removed, a lock without its build) goes at the next trim; a build
    being unpacked by a live seat stays."""
    bounds = Bounds(builds=1, bytes=MANY)
    held, unpacking, other = build("held"), build("unpacking"), build("other")
    holder = in_another_process(redis_url, cache, f"""
        lease = check_out(store, cache, {held!r}, 1, Bounds(1, {MANY}))
        print("holding", flush=True)
        sys.stdin.read()
    """)
    assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
    used(store, cache, unpacking, bounds)
    assert unpacked(cache) == sorted([held, unpacking])
    os.kill(holder.pid, signal.SIGKILL)
    holder.communicate()  # waits, and closes its pipes
    builds = cache / "builds"
    live = check_out(store, cache, unpacking, 1, bounds)  # a seat that is unpacking it
    assert isinstance(live, Lease)
    leftovers = [builds / f".unpacking-{other}-1-0123456789abcdef-dead0001",
                 builds / ".removing-gone-1-0123456789abcdef-dead0002",
                 builds / ".unpacking-olderworker1"]  # named for no build, an hour old
    kept = builds / f".unpacking-{live.folder.name}-live0003"
    recent = builds / ".unpacking-olderworker2"  # named for no build, maybe still unpacking
    for folder in (*leftovers, kept, recent):
        (folder / "deep").mkdir(parents=True)
        (folder / "deep" / "file").write_text("left")
    an_hour_ago = time.time() - 3700
    os.utime(leftovers[2], (an_hour_ago, an_hour_ago))
    (builds / "gone-1-0123456789abcdef.lock").write_text("4")
    used(store, cache, other, bounds)
    live.release()
    assert unpacked(cache) == sorted([unpacking, other])
    assert not any(folder.exists() for folder in leftovers) and kept.exists()
    assert recent.exists()
    assert not (builds / "gone-1-0123456789abcdef.lock").exists()


def test_a_disk_that_fails_the_cache_fails_the_seat_not_as_an_os_error(build, store, cache):
    """The driver retries an OSError as Redis unreachable, for good: a full or unwritable
    disk held the match on this worker forever (the hosted-fixes helper, by reading)."""
    bot = build("no room")
    (cache / "builds").write_text("")  # where the builds folder should be: not writable
    with pytest.raises(CacheFailed, match="hosted builds cache") as failed:
        check_out(store, cache, bot, 1, Bounds(1, MANY))
    assert not isinstance(failed.value, OSError)


def test_the_cache_folder_is_writable_by_its_user_alone_and_a_link_there_is_refused(
        tmp_path):
    """The default folder is in the shared temporary folder: another user could make it
    first (or a link named so) and put a build there for a sandbox to run."""
    made = cache_root(str(tmp_path / "new" / "hosted"))
    assert made.is_dir() and stat.S_IMODE(made.stat().st_mode) & 0o022 == 0
    kept = tmp_path / "kept"
    kept.mkdir()
    kept.chmod(0o777)
    assert cache_root(str(kept)) == kept and stat.S_IMODE(kept.stat().st_mode) == 0o755
    (tmp_path / "link").symlink_to(kept)
    (tmp_path / "file").write_text("")
    for unsafe in ("link", "file"):
        with pytest.raises(UnsafeCacheRoot, match="not a folder of this user's"):
            cache_root(str(tmp_path / unsafe))


def test_a_hosted_worker_refuses_to_start_on_a_cache_folder_not_its_own(tmp_path):
    (tmp_path / "link").symlink_to(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "worker", "--hosted", "--burst"], cwd=ROOT,
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "REFEREE_HOSTED_DIR": str(tmp_path / "link"),
             "REDIS_URL": "redis://127.0.0.1:9/0"})  # refused before Redis is asked
    assert done.returncode == 2, done.stderr
    assert "REFEREE_HOSTED_DIR" in done.stderr and len(done.stderr.splitlines()) == 1
