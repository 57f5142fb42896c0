"""BotClient against `https://` bots on loopback (a real TLS server, a throw-away CA the
process trusts through `SSL_CERT_FILE`, as an operator's system store would): answers,
kept connections and faults over TLS, and a certificate the referee does not trust."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.match.botclient import BotClient, BotReply
from tests.support.apitest import a_worker_plays
from tests.support.botserver import SLOW_S, BotServer
from tests.support.tls import server_context, tls_files

PAYLOAD = {"protocol": "referee/1", "match_id": "m-tls", "game": "aladino", "seat": 0,
           "step": 3, "deadline_ms": 200, "observation": {},
           "legal_actions": [{"type": "move", "direction": 1}, {"type": "move", "direction": 2}]}


class TlsBotServer(BotServer):
    """The test bots of tests/support/botserver.py, served over TLS."""

    def __init__(self, files: dict[str, Path]):
        super().__init__()
        self.socket = server_context(files).wrap_socket(self.socket, server_side=True)

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.server_address[1]}{path}"


@pytest.fixture(scope="module")
def tls(tmp_path_factory) -> dict[str, Path]:
    return tls_files(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def tls_bot(tls) -> Iterator[TlsBotServer]:
    server = TlsBotServer(tls)
    server.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def trusted(tls, monkeypatch) -> None:
    """The test CA trusted by this process and the workers it starts."""
    monkeypatch.setenv("SSL_CERT_FILE", str(tls["ca"]))


def decide(url: str, times: int = 1, deadline_ms: int = 2000) -> list[BotReply]:
    async def run() -> list[BotReply]:
        client = BotClient(url, deadline_ms)
        try:
            return [await client.decide(PAYLOAD) for _ in range(times)]
        finally:
            await client.aclose()

    return asyncio.run(run())


def test_a_good_answer_over_tls_on_one_kept_connection(tls_bot, trusted):
    before = len(tls_bot.client_ports)
    replies = decide(tls_bot.url("/first"), times=3)
    assert [reply.action for reply in replies] == [{"type": "move", "direction": 1}] * 3
    assert all(reply.fault is None for reply in replies)
    assert tls_bot.received["/first"][-1] == PAYLOAD
    assert len(set(tls_bot.client_ports[before:])) == 1


def test_a_certificate_the_referee_does_not_trust_is_a_crash(tls_bot, monkeypatch, tmp_path):
    monkeypatch.setenv("SSL_CERT_FILE", str(tls_files(tmp_path)["ca"]))  # another CA
    [reply] = decide(tls_bot.url("/first"))
    assert reply.fault == "crash" and reply.action is None
    assert "certificate verify failed" in reply.detail


def test_https_to_a_plain_http_bot_is_a_crash(bot_server, trusted):
    url = bot_server.url("/first").replace("http://", "https://")
    [reply] = decide(url)
    assert reply.fault == "crash" and "connection error" in reply.detail


@pytest.mark.parametrize("path, fault", [("/slow", "timeout"), ("/trickle", "timeout"),
                                         ("/garbage", "malformed"), ("/huge", "malformed"),
                                         ("/close", "crash"), ("/error", "crash")])
def test_faults_over_tls(tls_bot, trusted, path, fault):
    timed = path in ("/slow", "/trickle")
    [reply] = decide(tls_bot.url(path), deadline_ms=300 if timed else 3000)
    assert reply.fault == fault, reply.detail
    if timed:  # cut off at its deadline, not when the bot is done
        assert reply.elapsed_ms < SLOW_S * 1000


def test_a_worker_plays_a_match_against_https_bots(api, tls_bot, trusted, run_worker):
    record = a_worker_plays(api, run_worker, tls_bot.url("/random"), seed=8)
    assert record["forfeit"] is None
    assert all(step["fault"] is None for step in record["steps"])
