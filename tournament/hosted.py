"""Hosted bots (issue 29): uploaded source, built and run by hosted workers in the sandbox
(`referee.match.sandbox`).

- **Source.** `POST /bots` takes `{"language", "files": {path: text}}` or `{"language",
  "archive": base64 tar.gz}`; either becomes the same checked set of files (`source_files`:
  relative plain paths, regular files only, at most `MAX_SOURCE_BYTES` in all, the
  language's entry file among them), stored as a deterministic gzipped tar (`pack`).
- **Build.** Each new version queues a build (`Store.add_hosted_version`); a hosted worker
  claims it (`run_builds`), unpacks the source into a fresh folder (in `/dev/shm`: what the
  build writes counts against its memory limit, not the worker's disk), runs the language's
  build in the sandbox and stores the folder it leaves, packed, as the version's
  `artifact` (at most `MAX_ARTIFACT_BYTES`): `ready`, or `build_failed` with the log. Any
  hosted worker on any machine then runs that artifact, unpacked once into its bounded
  cache (`tournament.build_cache`), so every machine plays the same build.
- **Play.** A `HostedSeat` is one sandboxed process per match and seat, started as the
  match is taken up and kept until it ends: a JSON line in, a JSON line out, judged as a
  push bot's answer; an update is a line it must not answer; the result notice is its last
  line, then EOF. What it writes on stderr (a pipe: `referee.match.stderr`) is kept,
  capped, per match and seat, with the sandbox's notes apart from it. A match that moves to
  another worker (or parks for a pull seat) starts the program again there.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import gzip
import hashlib
import io
import logging
import os
import re
import subprocess
import tarfile
import tempfile
import time
import zlib
from collections.abc import Awaitable, Callable
from contextlib import suppress
from pathlib import Path
from typing import Any, Protocol

import orjson

from engines.base import JsonObject
from referee.errors import RefereeError
from referee.match import sandbox
from referee.match.botclient import RAW_LIMIT, BotReply, Fault, judge_answer
from referee.match.program import LineTooLong, ProgramDied
from referee.match.replay import SeatInfo, utc_now
from tournament.store import BuildStatus, Store

log = logging.getLogger(__name__)
InThread = Callable[..., Awaitable[Any]]

MAX_SOURCE_BYTES = 1 << 20
MAX_FILES = 200
MAX_PATH_CHARS = 200
MAX_ARCHIVE_TAR_BYTES = 4 << 20  # a tar of 1 MiB of files, headers and padding included
MAX_ARTIFACT_BYTES = 16 << 20
MAX_BUILD_BYTES = 64 << 20  # the build's files unpacked (sparse ones at their apparent size)
MAX_BUILD_ENTRIES = 5000
MAX_BUILD_DEPTH = 32
BUILD_STALE_S = 600
SHARED_MEMORY = "/dev/shm"
STOP_GRACE_S = 1.0
PATH_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]*")


class SourceError(RefereeError, ValueError):
    """Uploaded source the referee will not take; the message says why."""


# ----- source ----------------------------------------------------------------------------
def source_files(source: dict) -> dict[str, bytes]:
    """The checked files of an upload, `{"language", "files"}` or `{"language",
    "archive"}`; SourceError saying what is wrong."""
    if "files" in source:
        files = {path: text.encode() for path, text in source["files"].items()}
    else:
        files = _archive_files(source["archive"])
    for path in files:
        check_path(path)
    if not files:
        raise SourceError("the source holds no file")
    if len(files) > MAX_FILES:
        raise SourceError(f"the source holds {len(files)} files; at most {MAX_FILES}")
    size = sum(len(content) for content in files.values())
    if size > MAX_SOURCE_BYTES:
        raise SourceError(f"the source is {size} bytes; at most {MAX_SOURCE_BYTES} in all")
    entry = sandbox.entry_file(source["language"])
    if entry not in files:
        raise SourceError(f"a {source['language']} bot's entry file is {entry}: the source "
                          "has none at its top")
    return dict(sorted(files.items()))


def check_path(path: str) -> None:
    """SourceError unless `path` is relative and plain: parts of letters, digits and
    `._+-`, not starting with a dot or dash, at most `MAX_PATH_CHARS`."""
    parts = path.split("/")
    if len(path) > MAX_PATH_CHARS or not all(PATH_PART.fullmatch(part) for part in parts):
        raise SourceError(f"file path {path[:MAX_PATH_CHARS]!r} is not a plain relative path "
                          "(parts of letters, digits and ._+-, none starting with . or -)")


def _archive_files(encoded: str) -> dict[str, bytes]:
    """The regular files of a base64 tar.gz, read within bounds (a gzip or tar bomb is
    refused before it is expanded)."""
    try:
        packed = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise SourceError("archive is not base64") from None
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        tar_bytes = inflater.decompress(packed, MAX_ARCHIVE_TAR_BYTES + 1)
    except zlib.error as error:
        raise SourceError(f"archive is not gzip: {error}") from None
    if len(tar_bytes) > MAX_ARCHIVE_TAR_BYTES or inflater.unconsumed_tail:
        raise SourceError(f"archive expands past {MAX_ARCHIVE_TAR_BYTES} bytes")
    _check_headers(tar_bytes)
    files: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r:") as tar:
            for member in tar:
                name = member.name.removeprefix("./")
                if member.isdir():
                    continue
                if not member.isreg():
                    raise SourceError(f"archive member {name!r} is not a regular file")
                check_path(name)
                content = tar.extractfile(member)
                files[name] = content.read() if content else b""
    except tarfile.TarError as error:
        raise SourceError(f"archive is not a tar: {error}") from None
    return files


_PAX_TYPES = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE)
_DATA_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE, tarfile.GNUTYPE_LONGNAME,
               tarfile.GNUTYPE_LONGLINK, *_PAX_TYPES)
_PAX_LENGTH = re.compile(rb"([0-9]{1,20}) ")
_LONG_DIGIT_RUN = re.compile(rb"[0-9]{33}")


def _check_headers(tar_bytes: bytes) -> None:
    """Refuse, before `tarfile` parses them, the pax headers it would parse in time
    quadratic in their length (CPython before 3.11.10 and 3.12.6 reads them with regular
    expressions that backtrack: CVE-2024-6232; a 352-byte upload cost 25 s of the API's
    CPU), and the members it would refuse later anyway (links, devices, sparse files), so
    this walk reads the same headers `tarfile` reads. It stops where `tarfile` stops: at
    the archive's end or a header `tarfile` would not take."""
    position = 0
    while position + tarfile.BLOCKSIZE <= len(tar_bytes):
        try:
            info = tarfile.TarInfo.frombuf(tar_bytes[position:position + tarfile.BLOCKSIZE],
                                           tarfile.ENCODING, "surrogateescape")
        except tarfile.HeaderError:
            return
        position += tarfile.BLOCKSIZE
        if info.type == tarfile.DIRTYPE:
            continue  # tarfile reads no data after a directory's header
        if info.type not in _DATA_TYPES:
            raise SourceError(f"archive member {info.name!r} is not a regular file")
        if info.type in _PAX_TYPES:
            _check_pax_records(tar_bytes[position:position + info.size])
        position += -(-info.size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE


def _check_pax_records(data: bytes) -> None:
    """A pax header's records, each `<length> <keyword>=<value>\\n` whose length is its
    own (as CPython 3.11.10 checks them), no run of more than 32 digits (its search for
    `hdrcharset` backtracks over each), and no keyword that changes where the next member's
    data is (`size`, GNU's sparse maps)."""
    position = 0
    while position < len(data) and data[position] != 0:
        keyword, end = _pax_record(data, position)
        if keyword == b"size" or keyword.startswith(b"GNU.sparse"):
            raise SourceError(f"archive holds a pax header setting {keyword[:40]!r}, which "
                              "a source file has no use for")
        position = end
    if _LONG_DIGIT_RUN.search(data):
        raise SourceError("archive holds a pax header with a run of over 32 digits")


def _pax_record(data: bytes, position: int) -> tuple[bytes, int]:
    """The keyword of the pax record at `position`, and where the next one starts."""
    length = _PAX_LENGTH.match(data, position)
    end = position + int(length.group(1)) if length else position
    if length is None or end - position < 5 or end > len(data) or data[end - 1] != 0x0A:
        raise SourceError("archive holds a malformed pax header")
    keyword, equals, _ = data[length.end():end - 1].partition(b"=")
    if not keyword or not equals:
        raise SourceError("archive holds a malformed pax header")
    return keyword, end


def pack(files: dict[str, bytes]) -> bytes:
    """A gzipped tar of `files`, the same bytes for the same files."""
    buffer = io.BytesIO()
    with (gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=6, mtime=0) as zipped,
          tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar):
        for path, content in sorted(files.items()):
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(content), 0o644, 0
            tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def unpack(packed: bytes, folder: Path) -> None:
    """Write the files of `pack`'s output (or a build's artifact) under `folder`."""
    with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as tar:
        tar.extractall(folder, filter="data")


def pack_folder(folder: Path) -> bytes:
    """A build's folder as an artifact: its regular files (executable bits kept), within
    the bounds of `_build_files`."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=6) as tar:
        for path in _build_files(folder):
            info = tarfile.TarInfo(str(path.relative_to(folder)))
            info.size, info.mtime = path.stat().st_size, 0
            info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
            with path.open("rb") as content:
                tar.addfile(info, content)
    return buffer.getvalue()


def _build_files(folder: Path) -> list[Path]:
    """The regular files a build left (symbolic links are not followed), in order; a
    `SourceError` when the folder is deeper than `MAX_BUILD_DEPTH` or holds more than
    `MAX_BUILD_ENTRIES` entries or `MAX_BUILD_BYTES` of files. A build may leave sparse
    files (16 MiB each that cost nothing, packed to a few bytes, written out whole by every
    worker that plays them) or a tree deeper than Python's recursion reaches."""
    found: list[Path] = []
    entries, size, pending = 0, 0, [(folder, 0)]
    while pending:
        directory, depth = pending.pop()
        if depth > MAX_BUILD_DEPTH:
            raise SourceError(f"the build's folders nest deeper than {MAX_BUILD_DEPTH}")
        with os.scandir(directory) as listing:
            for entry in listing:
                entries += 1
                if entry.is_dir(follow_symlinks=False):
                    pending.append((Path(entry.path), depth + 1))
                elif entry.is_file(follow_symlinks=False):
                    found.append(Path(entry.path))
                    size += entry.stat(follow_symlinks=False).st_size
                if entries > MAX_BUILD_ENTRIES or size > MAX_BUILD_BYTES:
                    raise SourceError(f"the build leaves more than {MAX_BUILD_ENTRIES} files "
                                      f"and folders or {MAX_BUILD_BYTES} bytes of files")
    return sorted(found)


# ----- builds ----------------------------------------------------------------------------
async def run_builds(store: Store, limits: sandbox.Limits, worker: str,
                     in_thread: InThread) -> int:
    """Run the builds queued now, one after the other; how many."""
    done = 0
    await in_thread(store.requeue_stale_builds, BUILD_STALE_S)
    while (build := await in_thread(store.take_build)) is not None:
        try:
            await build_version(store, build["bot"], build["version"], limits, worker,
                                in_thread)
        except asyncio.CancelledError:  # the worker stops: another one builds it
            await asyncio.shield(in_thread(store.return_build, build))
            raise
        except Exception as error:
            log.exception("build %s failed", build)
            await in_thread(store.finish_build, build["bot"], build["version"], {
                "status": BuildStatus.FAILED.value, "finished_at": utc_now(),
                "log": f"the build could not be run: {error}"})
        await in_thread(store.build_done, build)
        done += 1
    return done


async def build_version(store: Store, bot_id: str, version: int, limits: sandbox.Limits,
                        worker: str, in_thread: InThread) -> None:
    """Build one version in the sandbox and record the outcome (and the artifact)."""
    build, source = await in_thread(lambda: (store.bot_build(bot_id, version),
                                             store.bot_source(bot_id, version)))
    if build is None or source is None:
        return  # the version is gone
    await in_thread(store.start_build, bot_id, version, worker, utc_now())
    language = sandbox.languages().get(build["language"])
    if language is None:
        outcome = _failed(f"this worker ({worker}) does not run {build['language']}", 0.0)
    else:
        outcome = await _build_in_sandbox(language, source, limits)
    await in_thread(store.finish_build, bot_id, version, {**outcome, "finished_at": utc_now()})
    log.info("bot %s version %d: %s", bot_id, version, outcome["status"],
             extra={"bot_id": bot_id})


async def _build_in_sandbox(language: sandbox.Language, source: bytes,
                            limits: sandbox.Limits) -> dict[str, Any]:
    folder = tempfile.mkdtemp(prefix="referee-build-", dir=_build_root())
    try:
        Path(folder).chmod(0o711)  # the sandbox's uid passes through to the bot's folder
        bot_dir = Path(folder, "bot")
        bot_dir.mkdir()
        unpack(source, bot_dir)
        result = await sandbox.build(language, bot_dir, limits)
        if not result.ok:
            return _failed(result.log, result.seconds)
        try:
            artifact = await asyncio.to_thread(pack_folder, bot_dir)
        except SourceError as error:
            return _failed(f"{result.log}\n{error}", result.seconds)
    finally:
        await asyncio.to_thread(remove_folder, folder)
    if len(artifact) > MAX_ARTIFACT_BYTES:
        return _failed(f"{result.log}\nthe build's output is {len(artifact)} bytes packed; at "
                       f"most {MAX_ARTIFACT_BYTES}", result.seconds)
    return {"status": BuildStatus.READY.value, "log": result.log, "seconds": result.seconds,
            "artifact": artifact, "digest": hashlib.sha256(artifact).hexdigest()}


def remove_folder(folder: str | Path) -> None:
    """Remove a folder whatever a build left in it: `rm`, since `shutil.rmtree` recurses as
    deep as the folders nest (a build's tree 3,000 deep stayed in /dev/shm)."""
    subprocess.run(["rm", "-rf", "--", str(folder)], check=False, capture_output=True)


def _build_root() -> str | None:
    """Where builds run: in RAM (`/dev/shm`, a tmpfs) where there is one, so what a build
    writes counts against its memory limit and cannot fill the worker's disk."""
    return SHARED_MEMORY if os.path.isdir(SHARED_MEMORY) else None


def _failed(text: str, seconds: float) -> dict[str, Any]:
    return {"status": BuildStatus.FAILED.value, "log": text, "seconds": seconds}


# ----- play ------------------------------------------------------------------------------
class Build(Protocol):
    """A build unpacked for a seat (`tournament.build_cache.Lease`): it stays where it is
    until released."""

    folder: Path

    def release(self) -> None: ...


class HostedSeat:
    """A hosted bot's seat: one sandboxed process for the whole match (see the module)."""

    def __init__(self, bot: dict, deadline_ms: int, build: Build | str, limits: sandbox.Limits,
                 keep_stderr: Callable[[bytes], Awaitable[None]]):
        """`build` is the build to run, released once its program is stopped, or why there
        is none (every decision crashes); `keep_stderr` stores what the program wrote once
        it is stopped."""
        self.bot_id, self.name = bot["id"], bot["name"]
        self.deadline_ms = deadline_ms
        self.updates = bot.get("updates", False)
        self.language = sandbox.languages().get(bot["language"])
        self.build, self.limits = build, limits
        self.keep_stderr = keep_stderr
        self.program: sandbox.HostedProgram | None = None
        self.failed: str | None = None  # why the program could not start
        self.telling: asyncio.Future[None] | None = None  # the updates, in order

    def info(self) -> SeatInfo:
        return {"kind": "bot", "bot_id": self.bot_id, "name": self.name,
                "deadline_ms": self.deadline_ms}

    async def start(self) -> None:
        """Start the program (before the first decision: its start-up is not charged)."""
        if isinstance(self.build, str) or self.language is None:
            self.failed = (self.build if isinstance(self.build, str)
                           else f"this worker does not run {self.name}'s language")
            return
        try:
            self.program = await sandbox.HostedProgram.start(self.language, self.build.folder,
                                                             self.limits)
        except (OSError, sandbox.SandboxUnavailable) as error:
            self.failed = f"the sandbox could not start the program: {error}"

    async def decide(self, payload: JsonObject) -> BotReply:
        """One decision: the payload as a line, the answer line judged within the
        payload's deadline."""
        deadline_ms = int(payload.get("deadline_ms", self.deadline_ms))
        if self.program is None:
            return BotReply(None, Fault.CRASH, "", 0.0, self.failed or "no program")
        if self.telling is not None:
            await self.telling  # the updates told go first (never waiting on the program)
        started = time.monotonic_ns()
        try:
            answer = await self.program.ask(orjson.dumps(payload), deadline_ms / 1000)
        except TimeoutError:
            return BotReply(None, Fault.TIMEOUT, "", _since(started),
                            f"no answer line within the deadline of {deadline_ms} ms")
        except LineTooLong as error:
            return BotReply(None, Fault.MALFORMED, error.prefix.decode(errors="replace"),
                            _since(started), str(error))
        except ProgramDied as error:
            return BotReply(None, Fault.CRASH, "", _since(started), str(error))
        elapsed = _since(started)
        return judge_answer(answer, answer[:RAW_LIMIT].decode(errors="replace"), elapsed)

    def update(self, payload: JsonObject) -> None:
        """Tell the program of a step it did not decide, after those told before."""
        if self.program is not None:
            self.telling = asyncio.ensure_future(
                self._tell(self.telling, self.program, orjson.dumps(payload)))

    @staticmethod
    async def _tell(before: asyncio.Future[None] | None, program: sandbox.HostedProgram,
                    line: bytes) -> None:
        if before is not None:
            await before
        with suppress(ProgramDied):
            await program.tell(line)

    async def notify(self, payload: JsonObject) -> None:
        """The result notice: the program's last line, then EOF."""
        await self._stop(orjson.dumps(payload))

    async def aclose(self) -> None:
        await self._stop(None)

    async def aclose_after_updates(self) -> None:
        await self._stop(None)

    async def _stop(self, last_line: bytes | None) -> None:
        """Stop the program (if it runs), then release its build (its stopping is the
        program's end: the build may go)."""
        program, self.program = self.program, None
        if program is not None:
            if self.telling is not None:
                await self.telling
            await program.stop(last_line, STOP_GRACE_S)
        if not isinstance(self.build, str):
            self.build.release()
        if program is not None:
            await self.keep_stderr(program.stderr_text().encode())


def _since(started_ns: int) -> float:
    return round((time.monotonic_ns() - started_ns) / 1e6, 3)

