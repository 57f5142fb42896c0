"""`GET /health` latency while slow clients hold sockets open against `referee serve`
(gunicorn, gevent workers, its default 2 workers): p50, p99 and max without attack, with
200 sockets each sending one header line every 5 s (slowloris), and with 200 sockets each
sending one body byte every 5 s. Goal: p99 <= 100 ms under either attack.

    python3 bench/slowloris.py [--sockets 200] [--requests 300] [--quick]

Each `GET /health` goes on a new connection (as a monitoring probe does), 0.1 s apart, and
its latency runs from connecting to reading the whole answer. The attack is
`bench/slowclients.SlowClients` (also used by tests/hardening/test_hardening_serve.py): a
socket the server cuts off is replaced at once, so the count stays constant.
"""

from __future__ import annotations

import argparse

import _support
from slowclients import SlowClients, health_latencies

from referee.processes import python_module, stop_all

GOAL_MS = 100.0
SPACING_S = 0.1
INTERVAL_S = 5.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sockets", type=int, default=200)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.sockets, args.requests = 20, 10
    _support.header(f"GET /health under {args.sockets} slow clients",
                    f"p99 <= {GOAL_MS:g} ms")
    with _support.redis_server() as server:
        port = _support.free_port()
        api = _support.start(python_module("referee.cli", "serve", "--port", str(port)), port,
                             env=_support.child_env(REDIS_URL=server.url,
                                                    REFEREE_ADMIN_TOKEN="bench-admin"))
        try:
            run(port, args.sockets, args.requests)
        finally:
            stop_all([api])


def run(port: int, sockets: int, requests: int) -> None:
    print(f"{'attack':40} {'reqs':>5} {'failed':>6} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'max ms':>7}  {'cut off':>7}  verdict")
    health_latencies("127.0.0.1", port, 20, 0)  # warm up
    report("none", health_latencies("127.0.0.1", port, requests, SPACING_S), None)
    for mode, label in (("headers", "a header line every 5 s"),
                        ("body", "a body byte every 5 s")):
        with SlowClients("127.0.0.1", port, sockets, mode, INTERVAL_S) as attack:
            measured = health_latencies("127.0.0.1", port, requests, SPACING_S)
        report(f"{sockets} sockets, {label}", measured, attack)


def report(label: str, measured: list[float | None], attack: SlowClients | None) -> None:
    answered = [seconds * 1000 for seconds in measured if seconds is not None]
    failed = len(measured) - len(answered)
    if not answered:
        print(f"{label:40} {len(measured):>5} {failed:>6}  no answer  MISSED  "
              f"({_support.load()})")
        return
    p99 = _support.percentile(answered, 0.99)
    verdict = "met" if p99 <= GOAL_MS and not failed else "MISSED"
    cut = "-" if attack is None else str(attack.closed_by_server)
    print(f"{label:40} {len(measured):>5} {failed:>6} "
          f"{_support.percentile(answered, 0.5):>7.1f} {p99:>7.1f} {max(answered):>7.1f}  "
          f"{cut:>7}  {verdict} ({_support.load()})")


if __name__ == "__main__":
    main()
