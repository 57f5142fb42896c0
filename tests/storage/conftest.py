"""Fixtures of the storage tests: the settings with an archive directory, the store reading
it, bots answering at random, and matches played to their end by the worker's driver in
this process."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import engines
from tests.support.apitest import SECRET, drive_match, two_player_options
from tournament.archive import ReplayArchive
from tournament.store import Store


@pytest.fixture
def archive_dir(tmp_path: Path) -> Path:
    return tmp_path / "archive"


@pytest.fixture
def config_overrides(archive_dir: Path) -> dict:
    """The common settings with an archive directory."""
    return {"archive_dir": str(archive_dir)}


@pytest.fixture
def store(redis_url: str, archive_dir: Path) -> Store:
    return Store.from_url(redis_url, ReplayArchive(archive_dir))


@pytest.fixture
def random_bots(api, bot_server) -> list[str]:
    """Four registered bots answering at random, for every game."""
    return [api.register_bot(bot_server.url("/random"), name=f"random {n}") for n in range(4)]


@pytest.fixture
def finished_match(api, redis_url: str, random_bots: list[str]) -> Callable[..., str]:
    """A match of `game` between random bots, played to its end and counted; its id."""

    def play(game: str, players: int = 2) -> str:
        options = two_player_options(game) if players == 2 else next(
            v["options"] for v in engines.get(game).variants() if v["num_players"] == players)
        match = api.create_match(game, [{"kind": "bot", "bot_id": bot}
                                        for bot in random_bots[:players]],
                                 options=options, deadline_ms=5000)
        assert drive_match(redis_url, match["id"], SECRET, keep_decisions_s=3600
                           )["status"] == "finished"
        return match["id"]

    return play
