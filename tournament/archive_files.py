"""The archive's files: one gzip file per archived match, its full sealed record (state hashes
included, so reading it back needs no engine, whatever version played it), at
`REFEREE_ARCHIVE_DIR/{game}/{YYYY-MM of its end}/{match id}.json.gz`: `zcat` and
`referee verify` read it as it is. Moving replays here is `tournament.archive`; reading
them back, `Store.get_replay`.

A file is written to a temporary name, flushed and renamed (whole or not at all), then read
back and compared; the same match always gives the same bytes, so several archivers at
once write the same file.
"""

from __future__ import annotations

import gzip
import os
import re
import secrets
from pathlib import Path
from typing import Any

import orjson

import engines
from referee.match import compact
from referee.match.replay import Record

SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


class ArchiveUnavailable(compact.StoredReplayError):
    """An archived replay cannot be read: the archive is not mounted, the file is gone or
    damaged (see the reason)."""


class ReplayArchive:
    """The replay files under one directory (local, NFS, or an object-storage mount)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    @staticmethod
    def relative_path(match: dict[str, Any]) -> str:
        """Where a finished match's replay goes, from its game, end and id."""
        if not SAFE_ID.match(match["id"]) or match["game"] not in engines.names():
            raise ValueError(f"match {match['id']!r} of {match['game']!r} has no safe file name")
        return f"{match['game']}/{match['finished_at'][:7]}/{match['id']}.json.gz"

    def write(self, relative: str, record: Record) -> None:
        """Write the record under `relative` whole or not at all (a temporary file renamed
        over the target), then check it reads back the same."""
        data = gzip.compress(orjson.dumps(record), compresslevel=6, mtime=0)
        path = self._path(relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            with open(temporary, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)
        if path.read_bytes() != data:
            raise ArchiveUnavailable(f"{relative} did not read back as written")

    def read(self, relative: str, match_id: str) -> Record:
        """The record archived under `relative` (ArchiveUnavailable when it cannot be)."""
        try:
            record = orjson.loads(gzip.decompress(self._path(relative).read_bytes()))
        except (OSError, EOFError, orjson.JSONDecodeError) as error:
            raise ArchiveUnavailable(f"the archived replay of match {match_id} ({relative}) "
                                     f"cannot be read: {error}") from None
        if record.get("match_id") != match_id:
            raise ArchiveUnavailable(f"{relative} holds another match's replay")
        return record

    def _path(self, relative: str) -> Path:
        path = (self.root / relative).resolve()
        if not path.is_relative_to(self.root.resolve()):
            raise ArchiveUnavailable(f"{relative!r} is outside the archive")
        return path
