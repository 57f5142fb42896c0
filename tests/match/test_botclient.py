"""BotClient against real HTTP bots on loopback: a good answer, and every fault code."""

import asyncio

import pytest

from referee.match.botclient import RAW_LIMIT, BotClient
from tests.support.botserver import SLOW_S

PAYLOAD = {"protocol": "referee/1", "match_id": "m-test", "game": "aladino", "seat": 0,
           "step": 3, "deadline_ms": 200, "observation": {},
           "legal_actions": [{"type": "move", "direction": 1}, {"type": "move", "direction": 2}]}


def decide(url: str, deadline_ms: int = 500):
    async def once():
        client = BotClient(url, deadline_ms)
        try:
            return await client.decide(PAYLOAD)
        finally:
            await client.aclose()

    return asyncio.run(once())


def test_a_good_answer_carries_the_action(bot_server):
    reply = decide(bot_server.url("/first"))
    assert reply.fault is None and reply.detail == ""
    assert reply.action == {"type": "move", "direction": 1}
    # kernel-dated: an instant answer on loopback may take no measurable time, never less
    assert '"direction"' in reply.raw and 0 <= reply.elapsed_ms < 1000
    assert bot_server.received["/first"][-1] == PAYLOAD


def test_connections_are_reused_between_decisions(bot_server):
    async def five():
        client = BotClient(bot_server.url("/first"), 500)
        replies = [await client.decide(PAYLOAD) for _ in range(5)]
        await client.aclose()
        return replies

    start = len(bot_server.client_ports)
    assert all(reply.fault is None for reply in asyncio.run(five()))
    assert len(set(bot_server.client_ports[start:])) == 1


def test_a_slow_bot_times_out_at_the_deadline(bot_server):
    reply = decide(bot_server.url("/slow"), deadline_ms=200)
    assert reply.fault == "timeout" and reply.action is None
    assert "200 ms" in reply.detail
    assert reply.elapsed_ms < SLOW_S * 1000


def test_connection_refused_is_a_crash(refused_url):
    reply = decide(refused_url)
    assert reply.fault == "crash" and "connection error" in reply.detail


def test_an_error_status_is_a_crash_with_the_body_kept(bot_server):
    reply = decide(bot_server.url("/error"))
    assert reply.fault == "crash" and "HTTP 500" in reply.detail
    assert "fell over" in reply.raw


@pytest.mark.parametrize("path, reason", [("/garbage", "not JSON"),
                                          ("/noaction", '"action" object')])
def test_malformed_answers(bot_server, path, reason):
    reply = decide(bot_server.url(path))
    assert reply.fault == "malformed" and reason in reply.detail
    assert reply.raw and len(reply.raw) <= RAW_LIMIT


def test_an_unknown_action_is_passed_on_for_the_runner_to_judge(bot_server):
    reply = decide(bot_server.url("/unknown"))
    assert reply.fault is None and reply.action == {"type": "__no_such_action__"}


def test_a_bot_trickling_its_answer_cannot_stretch_the_deadline(bot_server):
    reply = decide(bot_server.url("/trickle"), deadline_ms=250)
    assert reply.fault == "timeout" and reply.elapsed_ms < 1000


def test_a_bot_closing_the_connection_is_a_crash(bot_server):
    assert decide(bot_server.url("/close")).fault == "crash"


def test_a_huge_answer_is_malformed(bot_server):
    reply = decide(bot_server.url("/huge"), deadline_ms=3000)
    assert reply.fault == "malformed" and "larger than" in reply.detail
