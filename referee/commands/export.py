"""`referee export --game G [--since T] [--format ndjson|parquet] OUT`: every decision of the
game's finished matches as a training record (`referee.match.decisions`: match, step, seat,
bot and version, observation, legal actions, action, the seat's final rank and score).

It reads Redis (`REDIS_URL`; archived replays from `REFEREE_ARCHIVE_DIR`) with the
operator's view: every finished match, whether or not its deal is public yet (the API's
`GET /export/{game}` applies the readers' rights). Matches come in the order their results
were logged, each match's records by step. `--since` keeps the matches finished at that
time or later (ISO 8601, UTC unless it names a zone, or seconds since the epoch);
`--cursor` starts where an earlier run (or a page of the API) ended: every run prints the
cursor it ended at. `--jobs N` replays matches in N processes.

NDJSON: one record per line (OUT `-` is standard output). Parquet (needs pyarrow: the
`export` extra): one row per record, `action`, `legal_actions` and `observation` as JSON
text, zstd-compressed. The file is written under a temporary name and renamed once whole.

Exit status: 0 written; 1 Redis or a stored replay could not be read; 2 bad arguments (an
unknown game, a bad `--since` or `--cursor`, Parquet without pyarrow).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import redis
from tqdm import tqdm

import engines
from referee.config import Config
from referee.match.compact import StoredReplayError
from referee.match.decisions import FIELDS, Json, MatchRecords
from referee.match.rerun import RecordError
from tournament.archive_files import ReplayArchive
from tournament.export import Cursor, ExportError, Pass, Scanned, parse_since, passes
from tournament.store import Store

HELP = ("write every decision of a game's finished matches (observation, legal actions, "
        "action, final rank and score) as NDJSON or Parquet, for training")
FORMATS = ("ndjson", "parquet")
ROW_GROUP = 20_000  # Parquet rows written at once
IOV_MAX = 1024  # buffers one writev may take (Linux)
NO_PYARROW = ("--format parquet needs pyarrow: pip install 'game-referee[export]' "
              "(or write ndjson)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", required=True, help="the game: " + ", ".join(engines.names()))
    parser.add_argument("--since", metavar="T", help="only matches finished at T or later: "
                        "ISO 8601 (2026-05-01, 2026-05-01T12:00:00Z) or seconds since the "
                        "epoch")
    parser.add_argument("--format", choices=FORMATS, default="ndjson",
                        help="ndjson (default): a record per line; parquet: a row per record")
    parser.add_argument("--cursor", help="start where an earlier export ended (the cursor it "
                                         "printed, or an API page's Referee-Next-Cursor)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="processes replaying matches (default 1)")
    parser.add_argument("out", help="the file to write (ndjson: - for standard output)")


def run(args: argparse.Namespace) -> int:
    try:
        game, since, cursor = _checked(args)
        output = _output(args.format, args.out)
    except ValueError as error:
        print(f"referee: error: {error}", file=sys.stderr)
        return 2
    config = Config.from_env()
    archive = ReplayArchive(config.archive_dir) if config.archive_dir else None
    try:
        summary = export(Store.from_url(config.redis_url, archive), game, output, args.out,
                         cursor, since, args.jobs)
    except (redis.RedisError, StoredReplayError, RecordError) as error:
        print(f"referee: error: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `referee export ... - | head`: the reader has had enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    print(f"exported {summary.records} records of {summary.matches} matches to {args.out} "
          f"in {summary.seconds:.1f} s ({summary.rate:,.0f} records/s); cursor: "
          f"{summary.cursor.encode(game)}", file=sys.stderr)
    return 0


def _checked(args: argparse.Namespace) -> tuple[str, datetime | None, Cursor]:
    """The game, `--since` and `--cursor` (ValueError saying what is wrong)."""
    if args.game not in engines.names():
        raise ValueError(f"unknown game {args.game!r}; known games: {', '.join(engines.names())}")
    if args.jobs < 1:
        raise ValueError("--jobs must be at least 1")
    try:
        since = None if args.since is None else parse_since(args.since)
        cursor = Cursor() if args.cursor is None else Cursor.decode(args.cursor, args.game)
    except ExportError as error:
        raise ValueError(f"--{error.field}: {error.reason}") from None
    return args.game, since, cursor


# ----- what is written: one payload per pass, made where the pass is replayed ------------

def ndjson_payload(item: Pass) -> tuple[int, list[Json]]:
    """The pass's records as NDJSON lines: (records, the lines' parts in order)."""
    found = list(item.decisions())
    return len(found), MatchRecords.of(item.record).line_parts(found)


def parquet_payload(item: Pass) -> tuple[int, dict[str, list[Any]]]:
    """The pass's records as columns (JSON fields as text): (records, columns)."""
    found = list(item.decisions())
    return len(found), MatchRecords.of(item.record).columns(found)


@dataclass(frozen=True)
class Spooled:
    """A payload a replaying process wrote to a spool file of its own."""

    path: str
    length: int


class _Spool:
    """Where this replaying process writes its payloads: a file each in the export's spool
    folder, which the parent copies into the output in the kernel (`os.sendfile`) and
    removes, so the records' bytes pass through no pipe, and the spool holds only the
    payloads not yet copied."""

    folder: str | None = None
    written = 0

    @classmethod
    def open_in(cls, folder: str) -> None:
        """A pool's initializer: the spool folder."""
        cls.folder = folder

    @classmethod
    def write(cls, parts: list[Json]) -> Spooled:
        if cls.folder is None:
            raise RuntimeError("no spool folder: spooled payloads are made in export's pool")
        cls.written += 1
        path = os.path.join(cls.folder, f"{os.getpid()}-{cls.written}")
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            length = write_parts(descriptor, parts)
        finally:
            os.close(descriptor)
        return Spooled(path, length)


def write_parts(descriptor: int, parts: list[Json]) -> int:
    """Write `parts` one after the other to the file `descriptor` (`os.writev`: copied once,
    into the kernel, with no joined copy first); the bytes written."""
    total = 0
    for at in range(0, len(parts), IOV_MAX):
        chunk = parts[at:at + IOV_MAX]
        size = sum(len(part) for part in chunk)
        written = os.writev(descriptor, chunk)
        if written < size:  # a short write (a full disk, a signal): the rest, or its error
            rest = memoryview(b"".join(chunk))[written:]
            while rest:
                rest = rest[os.write(descriptor, rest):]
        total += size
    return total


def spooled_ndjson_payload(item: Pass) -> tuple[int, Spooled]:
    """`ndjson_payload` written to a spool file."""
    records, data = ndjson_payload(item)
    return records, _Spool.write(data)


class NdjsonOut:
    """Records appended to an NDJSON file (`-`: standard output)."""

    payload = staticmethod(ndjson_payload)
    pooled_payload = staticmethod(spooled_ndjson_payload)

    def __init__(self, path: str):
        """`path`: `-`, or the empty file `_target` made. Opened without truncating it:
        ext4 writes a truncated file's data out as it is closed (auto_da_alloc), 0.25 s
        for 400 MB of records."""
        if path == "-":
            sys.stdout.flush()
            self.descriptor = sys.stdout.fileno()
        else:
            self.descriptor = os.open(path, os.O_WRONLY)
        self.owned = path != "-"

    def write(self, payload: list[Json] | Spooled) -> None:
        if isinstance(payload, list):
            write_parts(self.descriptor, payload)
            return
        with open(payload.path, "rb") as spool:
            offset = 0
            while offset < payload.length:
                sent = os.sendfile(self.descriptor, spool.fileno(), offset,
                                   payload.length - offset)
                if not sent:
                    raise OSError(f"the spool file {payload.path} ended early")
                offset += sent
        os.unlink(payload.path)

    def close(self) -> None:
        if self.owned:
            os.close(self.descriptor)


class ParquetOut:
    """Records gathered into row groups of a Parquet file."""

    payload = pooled_payload = staticmethod(parquet_payload)

    def __init__(self, path: str):
        import pyarrow as pa  # type: ignore[import-untyped]  # the `export` extra
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        self.pa = pa
        self.schema = parquet_schema(pa)
        self.writer = pq.ParquetWriter(path, self.schema, compression="zstd")
        self.pending: dict[str, list[Any]] = {name: [] for name in FIELDS}

    def write(self, payload: dict[str, list[Any]]) -> None:
        for name, values in payload.items():
            self.pending[name] += values
        if len(self.pending["step"]) >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        if self.pending["step"]:
            self.writer.write_table(self.pa.table(self.pending, schema=self.schema))
            self.pending = {name: [] for name in FIELDS}

    def close(self) -> None:
        self._flush()
        self.writer.close()


def parquet_schema(pa: Any) -> Any:
    """The columns of an exported Parquet file, in `FIELDS` order."""
    types = {"num_players": pa.int32(), "step": pa.int32(), "seat": pa.int32(),
             "bot_version": pa.int32(), "rank": pa.int32(), "score": pa.float64()}
    return pa.schema([(name, types.get(name, pa.string())) for name in FIELDS])


def _output(kind: str, out: str) -> type[NdjsonOut | ParquetOut]:
    """How to open the output at a path (ValueError when it cannot be written so)."""
    if kind == "parquet":
        try:
            import pyarrow.parquet  # type: ignore[import-untyped]  # noqa: F401
        except ImportError:
            raise ValueError(NO_PYARROW) from None
        if out == "-":
            raise ValueError("--format parquet writes a file, not standard output")
        return ParquetOut
    return NdjsonOut


# ----- the export ---------------------------------------------------------------------------

@dataclass
class Summary:
    records: int = 0
    matches: int = 0
    seconds: float = 0.0
    cursor: Cursor = field(default_factory=Cursor)

    @property
    def rate(self) -> float:
        return self.records / self.seconds if self.seconds else 0.0


def export(store: Store, game: str, open_output: type[NdjsonOut | ParquetOut], out: str,
           cursor: Cursor | None = None, since: datetime | None = None, jobs: int = 1
           ) -> Summary:
    """Write the records of `game` from `cursor` to the path `out` (every seat of every
    finished match: the operator's view), replaying matches in `jobs` processes."""
    cursor = cursor or Cursor()
    summary = Summary(cursor=cursor)
    started = time.perf_counter()
    with _target(out) as path:
        output = open_output(path)
        try:
            items = _passes(passes(store, game, cursor, since), summary)
            with tqdm(unit=" records", disable=None, file=sys.stderr) as bar:
                for records, payload in _replayed(items, output, jobs):
                    output.write(payload)
                    summary.records += records
                    summary.matches += 1
                    bar.update(records)
        finally:
            output.close()
    summary.seconds = time.perf_counter() - started
    return summary


def _passes(items: Iterable[Pass | Scanned | Cursor], summary: Summary) -> Iterator[Pass]:
    """The passes of `items`, keeping in `summary` the cursor after what was taken."""
    for item in items:
        if isinstance(item, Pass):
            summary.cursor = item.after
            yield item
        else:
            summary.cursor = item.cursor if isinstance(item, Scanned) else item


def _replayed(items: Iterable[Pass], output: NdjsonOut | ParquetOut, jobs: int
              ) -> Iterator[Any]:
    """The output's payload of every item, in order, made in `jobs` processes (NDJSON:
    written to the processes' spool files, in a folder of their own)."""
    if jobs == 1:
        yield from map(output.payload, items)
        return
    with (tempfile.TemporaryDirectory(prefix="referee-export-") as folder,
          multiprocessing.get_context("fork").Pool(jobs, _Spool.open_in, (folder,)) as pool):
        yield from pool.imap(output.pooled_payload, items, chunksize=4)


@contextmanager
def _target(out: str) -> Iterator[str]:
    """A temporary path beside `out`, renamed to `out` once written whole (`-`: itself)."""
    if out == "-":
        yield out
        return
    folder = os.path.dirname(os.path.abspath(out))
    handle, temporary = tempfile.mkstemp(prefix=".export-", dir=folder)
    os.close(handle)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temporary, 0o666 & ~umask)  # as `open` would have made it, not mkstemp's 0600
    try:
        yield temporary
        os.replace(temporary, out)
    finally:
        Path(temporary).unlink(missing_ok=True)
