"""Hosted bots in Redis (issue 29): which bots are uploaded code, each version's source and
build, the builds waiting for a hosted worker, the languages the hosted workers run, and
the stderr of each hosted seat of a match."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from redis.typing import EncodableT, FieldT

from referee.match import stderr
from tournament.store.codec import dumps, loads
from tournament.store.keys import (
    STDERR_TTL_S,
    BuildField,
    MatchPart,
    bot_build_key,
    bot_source_key,
    builds_key,
    hosted_bots_key,
    hosted_languages_key,
    match_key,
)
from tournament.store.work import WorkList, WorkLists

BUILDS = WorkList(builds_key(), builds_key("claimed"))
TEXT_FIELDS = tuple(field for field in BuildField if field != BuildField.ARTIFACT)


class Hosted(WorkLists):
    """Sources, builds and stderr of the hosted bots."""

    def add_hosted_version(self, bot_id: str, version: int, source: bytes, language: str,
                           queued_at: str) -> None:
        """Keep a new version's source and queue its build (status `building`)."""
        with self.redis.pipeline() as pipe:
            pipe.sadd(hosted_bots_key(), bot_id)
            pipe.set(bot_source_key(bot_id, version), source)
            pipe.delete(bot_build_key(bot_id, version))
            pipe.hset(bot_build_key(bot_id, version), mapping={
                BuildField.STATUS: "building", BuildField.LANGUAGE: language,
                BuildField.QUEUED_AT: queued_at})
            pipe.rpush(BUILDS.queued, dumps({"bot": bot_id, "version": version}))
            pipe.execute()

    def hosted_among(self, bot_ids: list[str]) -> set[str]:
        """Those of `bot_ids` that are hosted bots."""
        if not bot_ids:
            return set()
        flags = cast(list[int], self.redis.smismember(hosted_bots_key(), bot_ids))
        return {bot_id for bot_id, flag in zip(bot_ids, flags, strict=True) if flag}

    def bot_source(self, bot_id: str, version: int) -> bytes | None:
        return cast(bytes | None, self.redis.get(bot_source_key(bot_id, version)))

    def bot_build(self, bot_id: str, version: int, artifact: bool = False) -> dict | None:
        """A version's build: its text fields decoded (`seconds` a float), and its
        `artifact` bytes when asked; None when the version is not a hosted one."""
        wanted = [*TEXT_FIELDS, *((BuildField.ARTIFACT,) if artifact else ())]
        values = cast(list[bytes | None],
                      self.redis.hmget(bot_build_key(bot_id, version), wanted))
        if values[0] is None:
            return None
        build: dict = {}
        for field, value in zip(wanted, values, strict=True):
            if field == BuildField.ARTIFACT:
                build[field] = value
            elif value is not None:
                build[field] = value.decode("utf-8", errors="replace")
        if "seconds" in build:
            build["seconds"] = float(build["seconds"])
        return build

    def build_statuses(self, versions: list[tuple[str, int]]) -> list[str | None]:
        """The build status of each (bot, version); None where it is not hosted."""
        with self.redis.pipeline(transaction=False) as pipe:
            for bot_id, version in versions:
                pipe.hget(bot_build_key(bot_id, version), BuildField.STATUS)
            return [raw.decode() if raw else None for raw in pipe.execute()]

    def start_build(self, bot_id: str, version: int, worker: str, started_at: str) -> None:
        self.redis.hset(bot_build_key(bot_id, version), mapping={
            BuildField.WORKER: worker, BuildField.STARTED_AT: started_at})

    def finish_build(self, bot_id: str, version: int, fields: Mapping[FieldT, EncodableT]
                     ) -> None:
        """Record a build's outcome (status, log, seconds, finished_at, artifact)."""
        key = bot_build_key(bot_id, version)
        if self.redis.exists(key):  # a version dropped meanwhile stays dropped
            self.redis.hset(key, mapping=fields)

    def take_build(self) -> dict | None:
        return self.take_work(BUILDS)

    def build_done(self, build: dict) -> None:
        self.work_done(BUILDS, build)

    def return_build(self, build: dict) -> None:
        self.return_work(BUILDS, build)

    def requeue_stale_builds(self, older_than_s: float) -> int:
        return self.requeue_stale_work(BUILDS, older_than_s)

    def announce_languages(self, languages: Mapping[str, dict]) -> None:
        """What this hosted worker runs (each language's name, version, build and run)."""
        if languages:
            self.redis.hset(hosted_languages_key(),
                            mapping={name: dumps(info) for name, info in languages.items()})

    def hosted_languages(self) -> dict[str, dict]:
        raw = cast(dict[bytes, bytes], self.redis.hgetall(hosted_languages_key()))
        return {name.decode(): loads(info) for name, info in sorted(raw.items())}

    def add_stderr(self, match_id: str, seat: int, text: bytes) -> None:
        """Add the stderr of a seat's program (`referee.match.stderr`'s text) to that of
        its earlier programs in the match (a match resumed elsewhere starts a new one),
        keeping the first and the last lines within `stderr.KEPT_BYTES`."""
        key = match_key(match_id, MatchPart.STDERR)
        kept = cast(bytes | None, self.redis.hget(key, str(seat))) or b""
        text = stderr.within(kept + text, stderr.KEPT_BYTES)
        with self.redis.pipeline() as pipe:
            pipe.hset(key, str(seat), text)
            pipe.expire(key, STDERR_TTL_S)
            pipe.execute()

    def match_stderr(self, match_id: str, seat: int) -> bytes | None:
        return cast(bytes | None,
                    self.redis.hget(match_key(match_id, MatchPart.STDERR), str(seat)))
