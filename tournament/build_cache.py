"""The hosted bots' builds a hosted worker runs, unpacked once into its cache (issue 29,
`REFEREE_HOSTED_DIR/builds`), shared by the worker processes of the machine, and bounded:
at most `REFEREE_HOSTED_CACHE_BUILDS` builds and `REFEREE_HOSTED_CACHE_MB` of files that
no seat is running.

In `builds/`:
- `{bot}-{version}-{digest}/`: a build, which a sandbox binds read-only at /bot;
- `{bot}-{version}-{digest}.lock`: its lock (never seen by a sandbox). A seat holds a shared
  `flock` on it from before the build is unpacked until its program is stopped (`Lease`);
  its modification time is the build's last use, its content the build's size in bytes;
- `.unpacking-{name}-*/`: a build being unpacked, renamed into place whole;
- `.removing-{name}-*/`: a build being removed.

After each build it unpacks, a worker trims the cache (`trim`): the least recently used
builds go first, each only when an exclusive `flock` on its lock is taken without waiting
(no seat of any process runs it); it is renamed away, its lock unlinked while held (a seat
that opened the lock meanwhile finds it gone from its path and opens it again), then it is
removed. What a process killed midway left (a folder being unpacked that no one holds, one
being removed, a lock without a build) goes at the next trim; a folder being unpacked that
names no build (an older worker's) goes once it is an hour old. Locks are the kernel's: they
go with the process that held them, however it ended.
"""

from __future__ import annotations

import fcntl
import logging
import os
import stat
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from referee.config import Config
from referee.errors import RefereeError
from tournament.hosted import remove_folder, unpack
from tournament.store import BuildStatus, Store

log = logging.getLogger(__name__)

UNPACKING = ".unpacking-"
UNNAMED_LEFT_S = 3600.0
"""How old a folder being unpacked that names no build (an older worker's) must be to go:
an unpacking takes seconds."""
REMOVING = ".removing-"
LOCK = ".lock"


@dataclass(frozen=True)
class Bounds:
    """The most a worker's cache keeps of the builds no seat runs."""

    builds: int
    bytes: int

    @classmethod
    def of(cls, config: Config) -> Bounds:
        return cls(config.hosted_cache_builds, config.hosted_cache_mb << 20)


@dataclass(frozen=True)
class CachedBuild:
    """A build in the cache: its folder's name, its size in bytes, its last use."""

    name: str
    size: int
    last_used: int  # ns


class Lease:
    """A build checked out for a seat: it stays in the cache until `release`."""

    def __init__(self, folder: Path, lock: int):
        self.folder = folder
        self._lock: int | None = lock

    def release(self) -> None:
        """The build is no longer run by this seat (again: harmless)."""
        lock, self._lock = self._lock, None
        if lock is not None:
            with suppress(OSError):
                _used_now(lock)
            os.close(lock)


class CacheFailed(RefereeError):
    """This machine's disk failed the cache (full, not writable)."""


class UnsafeCacheRoot(RefereeError):
    """REFEREE_HOSTED_DIR is not a folder of this user's own."""


def cache_root(configured: str) -> Path:
    """Where a worker keeps the artifacts it runs, unpacked (REFEREE_HOSTED_DIR): made if
    missing, and writable by this user alone (the sandbox's uid still passes through it to
    the build it binds); UnsafeCacheRoot when it is a link or another user's folder (in a
    shared temporary folder, another user could make it first and put a build there for
    a sandbox to run)."""
    root = Path(configured or Path(tempfile.gettempdir(), "referee-hosted"))
    with suppress(FileExistsError):
        root.mkdir(mode=0o755, parents=True)
    status = os.lstat(root)
    if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.geteuid():
        raise UnsafeCacheRoot(f"REFEREE_HOSTED_DIR: {root} is not a folder of this user's "
                              f"(uid {os.geteuid()}): a link, or another user's")
    if status.st_mode & 0o022:
        os.chmod(root, stat.S_IMODE(status.st_mode) & ~0o022)
    return root


def check_out(store: Store, root: Path, bot_id: str, version: int, bounds: Bounds
              ) -> Lease | str:
    """The version's build, unpacked once into the cache and held there until the lease
    is released; why there is none when it is not `ready`. CacheFailed when this machine's
    disk fails it (full, or not writable): not an OSError, which the driver takes for Redis
    and retries, so the match would wait on this worker for good; the driver defers the
    match instead, for any worker to try again."""
    build = store.bot_build(bot_id, version)
    if build is None or build.get("status") != BuildStatus.READY.value:
        state = "not a hosted version" if build is None else build.get("status")
        return f"bot {bot_id} version {version} has no build to run ({state})"
    try:
        return _unpacked_and_held(store, root, bot_id, version, build["digest"], bounds)
    except OSError as error:
        raise CacheFailed(f"the hosted builds cache at {root}: {error}") from error


def _unpacked_and_held(store: Store, root: Path, bot_id: str, version: int, digest: str,
                       bounds: Bounds) -> Lease:
    builds = _made(root / "builds")
    folder = builds / f"{bot_id}-{version}-{digest[:16]}"
    lock = _shared_lock(_lock_path(folder))
    try:
        if not folder.is_dir():
            artifact = (store.bot_build(bot_id, version, artifact=True) or {})["artifact"]
            _unpack_into(artifact, folder, lock)
            trim(builds, bounds)
        _used_now(lock)
    except BaseException:
        os.close(lock)
        raise
    return Lease(folder, lock)


def trim(builds: Path, bounds: Bounds) -> None:
    """Remove what a killed process left, then the least recently used builds no seat
    runs until the rest are within `bounds` (or every one left is in use)."""
    _remove_leftovers(builds)
    cached = sorted(_cached(builds), key=lambda build: build.last_used)
    count, size = len(cached), sum(build.size for build in cached)
    for build in cached:
        if count <= bounds.builds and size <= bounds.bytes:
            return
        if _evicted(builds, build.name):
            count, size = count - 1, size - build.size
    if count > bounds.builds or size > bounds.bytes:
        log.info("the cache of builds %s holds %d builds, %d bytes: all in use", builds,
                 count, size)


def _unpack_into(artifact: bytes, folder: Path, lock: int) -> None:
    """Unpack the artifact beside `folder`, record its size in its lock, and rename it into
    place (another process may have done it first: then its copy stays)."""
    staging = Path(tempfile.mkdtemp(prefix=f"{UNPACKING}{folder.name}-", dir=folder.parent))
    try:
        unpack(artifact, staging)
        staging.chmod(0o755)
        os.ftruncate(lock, 0)
        os.pwrite(lock, str(_size(staging)).encode(), 0)
        staging.rename(folder)
    except OSError:
        if not folder.is_dir():
            raise
    finally:
        if staging.exists():
            remove_folder(staging)


def _shared_lock(path: Path) -> int:
    """A descriptor of the lock at `path` holding a shared flock on it (waiting, if need
    be, for a trim's exclusive one: a moment), the lock still at its path."""
    while True:
        lock = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(lock, fcntl.LOCK_SH)
        if _still_at(path, lock):
            return lock
        os.close(lock)  # a trim removed it meanwhile: the new one


@contextmanager
def _unused(path: Path) -> Iterator[bool]:
    """Whether no seat holds the lock at `path`: an exclusive flock on it taken without
    waiting, held for the block."""
    lock = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
        else:
            yield _still_at(path, lock)
    finally:
        os.close(lock)


def _still_at(path: Path, lock: int) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(lock).st_ino
    except FileNotFoundError:
        return False


def _evicted(builds: Path, name: str) -> bool:
    """Remove the build `name` unless a seat runs it; whether it is gone."""
    trash = builds / f"{REMOVING}{name}-{uuid.uuid4().hex[:8]}"
    lock = builds / f"{name}{LOCK}"
    with _unused(lock) as unused:
        if not unused:
            return False
        with suppress(FileNotFoundError):
            (builds / name).rename(trash)
        lock.unlink()
    if trash.exists():
        remove_folder(trash)
    return True


def _remove_leftovers(builds: Path) -> None:
    """What processes killed midway left: folders being removed, folders being unpacked
    that no seat holds (an unpacking seat holds its build's lock), locks without a build."""
    for entry in os.listdir(builds):
        if entry.startswith(REMOVING):
            remove_folder(builds / entry)
        elif entry.startswith(UNPACKING):
            name = entry.removeprefix(UNPACKING).rpartition("-")[0]
            if not name:  # an older worker's, named for no build: no lock tells, its age does
                if _older_than(builds / entry, UNNAMED_LEFT_S):
                    remove_folder(builds / entry)
                continue
            with _unused(builds / f"{name}{LOCK}") as unused:
                if unused:
                    remove_folder(builds / entry)
                    _forget_lock(builds, name)
        elif entry.endswith(LOCK) and not (builds / entry.removesuffix(LOCK)).is_dir():
            with _unused(builds / entry) as unused:
                if unused:
                    _forget_lock(builds, entry.removesuffix(LOCK))


def _older_than(path: Path, seconds: float) -> bool:
    """Last changed more than `seconds` ago (False once gone)."""
    try:
        return time.time() - path.lstat().st_mtime > seconds
    except FileNotFoundError:
        return False


def _forget_lock(builds: Path, name: str) -> None:
    """Unlink the lock of a build that is not there (the caller holds it exclusively)."""
    if not (builds / name).is_dir():
        (builds / f"{name}{LOCK}").unlink(missing_ok=True)


def _cached(builds: Path) -> Iterator[CachedBuild]:
    """The builds in the cache, each with its size and last use (a build unpacked before
    locks were kept: its folder's time, its files' sizes)."""
    for entry in os.scandir(builds):
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
            continue
        lock = Path(builds, entry.name + LOCK)
        try:
            recorded = lock.read_text()
            yield CachedBuild(entry.name, int(recorded), lock.stat().st_mtime_ns)
        except (OSError, ValueError):
            with suppress(OSError):
                yield CachedBuild(entry.name, _size(Path(entry.path)),
                                  entry.stat(follow_symlinks=False).st_mtime_ns)


def _size(folder: Path) -> int:
    """The size of the files in `folder` (links not followed)."""
    return sum(os.lstat(os.path.join(parent, name)).st_size
               for parent, _, names in os.walk(folder) for name in names)


def _used_now(lock: int) -> None:
    """Its lock's modification time is the build's last use (set to the nanosecond: the
    kernel's own is a tick coarse, and a tie would leave the order to chance)."""
    now = time.time_ns()
    os.utime(lock, ns=(now, now))


def _lock_path(folder: Path) -> Path:
    return folder.with_name(folder.name + LOCK)


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder

