"""`referee serve` under attack (issue 14, items 8 and 11): 200 slowloris sockets, sending a
header line (or a body byte) every 5 s, never stop `GET /health` from answering, and slow
requests are cut off by the server's limits; two servers on one machine do not share a
gunicorn control socket (there is none).

The bound on each `GET /health` (half of KEEPALIVE_S, the sooner of the two cut-offs: a
server the attack held would answer only after it) is generous for a loaded machine,
where the first answer beside 200 new sockets took 1.3 s at load 8: the figures of the
100 ms goal are measured by `bench/slowloris.py` (docs/performance.md). The attacks hit this
module's own `referee serve` (`live_server` is one per module), not another module's."""

from __future__ import annotations

import requests

from bench.slowclients import SlowClients, health_latencies
from referee.commands.serve import BODY_S, KEEPALIVE_S
from tests.support.live_server import LiveServer

SLOW_SOCKETS = 200
HEALTH_BOUND_S = KEEPALIVE_S / 2


def test_health_answers_while_200_sockets_trickle_their_headers(live_server):
    """Each slow socket sends a header line every 5 s and never ends its head; the server
    drops a head that is not whole after KEEPALIVE_S, and the attacker reconnects at once."""
    with SlowClients("127.0.0.1", live_server.port, SLOW_SOCKETS, "headers", 5.0) as attack:
        latencies = health_latencies("127.0.0.1", live_server.port, requests=24, spacing_s=0.5)
    assert attack.opened >= SLOW_SOCKETS
    assert all(t is not None and t < HEALTH_BOUND_S for t in latencies), latencies
    assert attack.closed_by_server >= SLOW_SOCKETS, \
        f"slow heads were not cut off after {KEEPALIVE_S} s: {attack.closed_by_server}"


def test_health_answers_while_200_sockets_trickle_their_bodies(redis_server, tmp_path):
    """Each slow socket sends a whole head announcing a 100 kB body to POST /replays/verify
    (which reads it without a token), then one byte every 5 s: after BODY_S the server
    answers 408 and closes. (This server lifts the verify rate limit: under the default one
    an attacker's address gets its 429 before any body is read.)"""
    server = LiveServer(redis_server, tmp_path / "serve.log", REFEREE_VERIFY_RATE="1000000/1")
    try:
        attack_slow_bodies(server)
    finally:
        server.stop()


def attack_slow_bodies(live_server: LiveServer) -> None:
    with SlowClients("127.0.0.1", live_server.port, SLOW_SOCKETS, "body", 5.0) as attack:
        latencies = health_latencies("127.0.0.1", live_server.port, requests=32, spacing_s=0.5)
    assert attack.opened >= SLOW_SOCKETS
    assert all(t is not None and t < HEALTH_BOUND_S for t in latencies), latencies
    timeouts = sum(n for line, n in attack.answers.items() if line.startswith("HTTP/1.1 408"))
    assert timeouts >= SLOW_SOCKETS // 2, \
        f"slow bodies were not cut off after {BODY_S} s: {attack.answers}"


def test_two_servers_side_by_side_have_no_shared_control_socket(redis_server, tmp_path):
    """gunicorn 25+ opened its control socket at one fixed path per user
    ($XDG_RUNTIME_DIR/gunicorn.ctl or ~/.gunicorn/gunicorn.ctl), so a second `referee
    serve` took over the first one's. There is none now, and each server stands alone."""
    home, runtime = tmp_path / "home", tmp_path / "runtime"
    home.mkdir()
    runtime.mkdir()
    env = {"HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}
    first = LiveServer(redis_server, tmp_path / "first.log", **env)
    second = None
    try:
        second = LiveServer(redis_server, tmp_path / "second.log", **env)
        for live in (first, second):
            assert requests.get(f"{live.url}/health", timeout=10).status_code == 200
        assert not [*home.rglob("*.ctl"), *runtime.rglob("*.ctl")]
        first.stop()
        assert requests.get(f"{second.url}/health", timeout=10).status_code == 200
    finally:
        first.stop()
        if second is not None:
            second.stop()
