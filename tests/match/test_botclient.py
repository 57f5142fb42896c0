"""BotClient against real HTTP bots on loopback: a good answer, and every fault code."""

import asyncio
import contextlib
import gc
import time
from collections.abc import Callable, Iterator

import pytest

from referee.match import botclient
from referee.match.botclient import RAW_LIMIT, BotClient, BotReply
from tests.support.botserver import SLOW_S
from tests.support.floodbot import flood_bot
from tests.support.python_process import ENDLESS_S
from tests.support.timed_bot import bot_process

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


def test_a_decision_leaves_no_garbage_for_the_collector(bot_server):
    """A worker makes ~1,000 decisions a second: an answer held in a reference cycle (its
    parser holds its callbacks) waits for the collector, whose passes then cost ~2% of
    the worker's CPU (docs/performance.md §10, session 26)."""
    async def five():
        client = BotClient(bot_server.url("/first"), 500)
        try:
            return [await client.decide(PAYLOAD) for _ in range(5)]
        finally:
            await client.aclose()

    with answers_found_by_gc() as found:
        assert all(reply.fault is None for reply in asyncio.run(five()))
    assert found == []


@contextlib.contextmanager
def answers_found_by_gc() -> Iterator[list[str]]:
    """A context in which the collector keeps what it finds; the `_Answer`s among it."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    answers: list[str] = []
    try:
        yield answers
        gc.collect()
        answers += [type(o).__name__ for o in gc.garbage if isinstance(o, botclient._Answer)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


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


@pytest.mark.parametrize("kind", ["continue", "header", "extension", "body"])
def test_a_bot_that_never_stops_sending_is_cut_off_and_holds_no_other_match(kind, tmp_path):
    """A bot whose answer never ends (interim answers, a header line, a chunk extension or
    chunk framing, sent as fast as loopback takes them) is a fault of its seat, at its
    deadline or at the answer's size bounds, and another match's decision on the same event
    loop meanwhile gets its answer. (Before: the client read while bytes kept arriving, so
    the deadline's timer never ran, the loop was held and memory grew without bound.)"""
    async def both(flooding_url, good_url):
        flooded = BotClient(flooding_url, 300)
        good = BotClient(good_url, 5000)
        try:
            return await asyncio.wait_for(asyncio.gather(
                flooded.decide({**PAYLOAD, "deadline_ms": 300}),
                good.decide({**PAYLOAD, "type": "decision", "deadline_ms": 5000})),
                ENDLESS_S)
        finally:
            await flooded.aclose()
            await good.aclose()

    with flood_bot(kind) as url, bot_process(tmp_path, "--fixed-ms", "100") as (good_url, _):
        flooded, answered = asyncio.run(both(url, good_url))
    assert flooded.action is None
    assert flooded.fault in ("timeout", "malformed", "crash"), flooded.detail
    assert answered.fault is None, answered.detail


def decide_on_a_busy_loop(url: str, deadline_ms: int, busy_s: float,
                          meanwhile: Callable[[], None] = lambda: None) -> BotReply:
    """One decision whose answer is read late: once its request is out, another match's
    work holds the event loop for `busy_s` (`meanwhile` runs as the hold begins)."""
    async def once() -> BotReply:
        client = BotClient(url, deadline_ms)
        deciding = asyncio.ensure_future(client.decide({**PAYLOAD, "type": "decision",
                                                         "deadline_ms": deadline_ms}))
        await asyncio.sleep(0.05)  # the request goes out
        meanwhile()
        time.sleep(busy_s)
        try:
            return await asyncio.wait_for(deciding, ENDLESS_S)
        finally:
            await client.aclose()

    return asyncio.run(once())


def test_an_answer_that_arrived_after_the_deadline_is_a_timeout_however_late_it_is_read(
        tmp_path):
    """A bot answering 400 ms after a request with a 300 ms deadline has timed out, even when
    the event loop (busy with another match) reads its answer and the deadline's timer in
    the same turn: the deadline holds by when the answer arrived. (Before: the loop ran the
    socket's callback before the timer, and the late answer was taken as a good one.)"""
    with bot_process(tmp_path, "--fixed-ms", "400") as (url, _):
        reply = decide_on_a_busy_loop(url, 300, 1.0)
    assert reply.fault == "timeout" and reply.action is None, (reply.fault, reply.detail)
    assert reply.elapsed_ms >= 300


def test_a_clock_step_while_the_answer_waits_unread_never_makes_it_late(tmp_path,
                                                                       monkeypatch):
    """The kernel dates an answer on CLOCK_REALTIME; when that clock steps back 300 ms
    (NTP, a virtual machine resumed) after the request went out and before the busy loop
    reads the answer, a bot that answered in 100 ms of its 250 ms is still in time (the
    referee's clock, not the seat's, moved)."""
    stepped = {"ns": 0}
    true_offset = botclient.realtime_offset_ns

    def offset_after_steps() -> tuple[int, int]:
        now, offset = true_offset()
        return now, offset - stepped["ns"]

    monkeypatch.setattr(botclient, "realtime_offset_ns", offset_after_steps)

    def step_back() -> None:
        stepped["ns"] = 300_000_000

    with bot_process(tmp_path, "--fixed-ms", "100") as (url, _):
        reply = decide_on_a_busy_loop(url, 250, 0.5, step_back)
    assert reply.fault is None, (reply.fault, reply.detail)
    assert 100 <= reply.elapsed_ms < 250


def _read_request(connection) -> bytes:
    """One request's body from a raw socket (a bot of these tests answers it by hand)."""
    head = b""
    while b"\r\n\r\n" not in head:
        head += connection.recv(65536)
    length = int(head.lower().split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
    body = head.split(b"\r\n\r\n", 1)[1]
    while len(body) < length:
        body += connection.recv(65536)
    return body


def _out_of_turn_bot(listener, answers: int) -> None:
    """Answers each request with a good answer followed at once by a second, forged one
    (choosing the other move), as a bot speaking out of turn would; `answers` requests."""
    good = b'{"action": {"type": "move", "direction": 1}}'
    forged = b'{"action": {"type": "move", "direction": 2}}'
    for _ in range(answers):
        try:
            connection, _ = listener.accept()
        except OSError:  # the test closed the listener: the client kept its connection
            return
        with connection:
            _read_request(connection)
            connection.sendall(b"".join(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                + str(len(answer)).encode() + b"\r\n\r\n" + answer for answer in (good, forged)))
            connection.recv(1)  # until the referee closes it or writes again


def test_an_answer_sent_out_of_turn_is_never_taken_for_the_next_one():
    """A second answer written right behind the first (before any request asked for it)
    is never the answer to a later decision: each decision gets its own answer or is a
    fault of the seat (the surplus makes the answer malformed when it arrives with it)."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    serving = threading.Thread(target=_out_of_turn_bot, args=(listener, 3), daemon=True)
    serving.start()

    async def three():
        client = BotClient(f"http://127.0.0.1:{listener.getsockname()[1]}/", 2000)
        replies = [await client.decide(PAYLOAD) for _ in range(3)]
        await client.aclose()
        return replies

    try:
        replies = asyncio.run(three())
    finally:
        listener.close()  # the daemon bot thread may wait on a connection the client kept
    assert all(reply.action == {"type": "move", "direction": 1} if reply.fault is None
               else reply.action is None and reply.fault in ("malformed", "crash")
               for reply in replies), [(reply.fault, reply.detail) for reply in replies]


# ----- connections kept between matches (KeptConnections) ------------------------------------
def seats_one_after_another(url: str, seats: int, kept: botclient.KeptConnections | None,
                            between=None) -> list[BotReply]:
    """`seats` clients to `url` in turn on one event loop, each deciding twice then closed,
    as a worker's matches one after another; `between(n)` is awaited after the n-th."""
    async def run():
        replies = []
        for n in range(seats):
            client = BotClient(url, 2000, kept=kept)
            replies += [await client.decide(PAYLOAD) for _ in range(2)]
            await client.aclose()
            if between:
                await between(n)
        if kept:
            kept.close()
        return replies

    return asyncio.run(run())


def test_seats_one_after_another_share_one_kept_connection(bot_server):
    start = len(bot_server.client_ports)
    replies = seats_one_after_another(bot_server.url("/first"), 4, botclient.KeptConnections())
    assert all(reply.fault is None for reply in replies)
    assert len(set(bot_server.client_ports[start:])) == 1


def test_without_kept_connections_each_client_connects_anew(bot_server):
    start = len(bot_server.client_ports)
    replies = seats_one_after_another(bot_server.url("/first"), 3, None)
    assert all(reply.fault is None for reply in replies)
    assert len(set(bot_server.client_ports[start:])) == 3


def test_a_kept_connection_is_closed_once_idle_too_long(bot_server):
    """The timer closing it is due before the sleep ends, whatever the machine's load: the
    loop runs its timers in the order they are due."""
    start = len(bot_server.client_ports)
    replies = seats_one_after_another(bot_server.url("/first"), 2,
                                      botclient.KeptConnections(idle_s=0.05),
                                      between=lambda n: asyncio.sleep(0.5))
    assert all(reply.fault is None for reply in replies)
    assert len(set(bot_server.client_ports[start:])) == 2


def test_clients_checked_against_another_allowlist_never_share_a_connection(bot_server):
    kept = botclient.KeptConnections()
    start = len(bot_server.client_ports)

    async def run():
        for allowlist in (("127.0.0.1",), ("127.0.0.0/8",), ("127.0.0.1",)):
            client = BotClient(bot_server.url("/first"), 2000, allowlist=allowlist, kept=kept)
            assert (await client.decide(PAYLOAD)).fault is None
            await client.aclose()
        kept.close()

    asyncio.run(run())
    assert len(set(bot_server.client_ports[start:])) == 2  # the first and last shared one


def test_at_most_per_address_connections_are_kept(bot_server):
    kept = botclient.KeptConnections(per_address=2)

    async def run():
        clients = [BotClient(bot_server.url("/first"), 2000, kept=kept) for _ in range(4)]
        replies = await asyncio.gather(*(client.decide(PAYLOAD) for client in clients))
        for client in clients:
            await client.aclose()
        counted = sum(len(connections) for connections in kept.kept.values())
        kept.close()
        return replies, counted

    replies, counted = asyncio.run(run())
    assert all(reply.fault is None for reply in replies) and counted == 2


def _closing_bot(listener, requests: int) -> None:
    """Answers one request on each connection, keep-alive, then resets it (SO_LINGER 0), as
    a server closing an idle connection does just as the referee takes it again."""
    import socket
    import struct
    answer = b'{"action": {"type": "move", "direction": 1}}'
    for _ in range(requests):
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        with connection:
            _read_request(connection)
            connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                               b"content-length: " + str(len(answer)).encode() + b"\r\n\r\n"
                               + answer)
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def test_a_kept_connection_the_bot_reset_unseen_is_replaced_not_a_crash():
    """The bot resets the connection after its answer; the next client takes it before the
    event loop has seen the reset (the loop is held meanwhile, as a busy worker's is): the
    request fails on it and is sent once more on a new connection."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=_closing_bot, args=(listener, 2), daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/"
    kept = botclient.KeptConnections()

    async def run():
        first = BotClient(url, 5000, kept=kept)
        replies = [await first.decide(PAYLOAD)]
        await first.aclose()
        time.sleep(0.5)  # the loop held: the reset arrives, unseen by it
        second = BotClient(url, 5000, kept=kept)
        taken = kept.kept[second.address][-1][0]
        replies.append(await second.decide(PAYLOAD))
        await second.aclose()
        kept.close()
        return replies, taken, second.connection

    try:
        replies, taken, _ = asyncio.run(run())
    finally:
        listener.close()
    assert [reply.fault for reply in replies] == [None, None], [r.detail for r in replies]
    assert taken.closed  # the kept one was taken, failed, and was dropped


def _thinks_then_closes_bot(listener, think_s: float) -> None:
    """Answers the first request at once; on the same connection, the second after
    `think_s` with no answer but a close; on a new connection, answers after `think_s`."""
    answer = b'{"action": {"type": "move", "direction": 1}}'
    reply = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
             + str(len(answer)).encode() + b"\r\n\r\n" + answer)
    try:
        first, _ = listener.accept()
        with first:
            _read_request(first)
            first.sendall(reply)
            _read_request(first)
            time.sleep(think_s)
        second, _ = listener.accept()
        with second:
            _read_request(second)
            time.sleep(think_s)
            second.sendall(reply)
            second.recv(1)
    except OSError:  # the test closed the listener
        return


def test_a_bot_closing_its_kept_connection_after_thinking_gains_no_second_deadline():
    """The request is sent again on a new connection (the kept one was closed), but only
    within what is left of its deadline: 600 ms spent, 400 left, a bot that needs 600
    again times out, charged the whole time."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=_thinks_then_closes_bot, args=(listener, 0.6),
                     daemon=True).start()

    async def two():
        client = BotClient(f"http://127.0.0.1:{listener.getsockname()[1]}/", 1000)
        payload = {**PAYLOAD, "deadline_ms": 1000}
        replies = [await client.decide(payload), await client.decide(payload)]
        await client.aclose()
        return replies

    try:
        first, second = asyncio.run(two())
    finally:
        listener.close()
    assert first.fault is None
    assert second.fault == "timeout" and second.elapsed_ms >= 1000, (second.fault,
                                                                      second.detail)
