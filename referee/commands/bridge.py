"""`referee bridge --port P [--host H] [--logs DIR] -- CMD [ARGS...]`: serve a stdin/stdout
program as a push bot at http://H:P/ (issue 18).

One CMD process per match and seat, started at its first decision and kept for the whole
match: each decision is one line of JSON on its stdin (the body the referee POSTed), its
answer one line `{"action": ...}` on stdout. After the match it gets the result notice as
one line `{"type": "result", ...}`, then EOF, and is killed if still running a second
later. Its stderr goes to DIR/<match_id>-seat<N>.log, with the bridge's own notes; past
--logs-mb in the logs of ended matches, the oldest are removed.
Details and limits: `referee.bridge.server` and docs/bots.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import logging
import os
import signal
import sys
import tempfile
from pathlib import Path

from referee.bridge import BadCommand, Bridge, BridgeConfig, check_runnable
from referee.bridge.logs import DEFAULT_LOGS_MB
from referee.bridge.server import DEFAULT_IDLE_TIMEOUT_S, DEFAULT_MAX_PROGRAMS, DEFAULT_STDERR_MB

HELP = "serve a program that reads decisions on stdin and answers on stdout as a push bot"
SECRET_ENV = "REFEREE_BOT_SECRET"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1",
                        help="the address to listen on (default: loopback only)")
    parser.add_argument("--logs", type=Path, metavar="DIR",
                        help="folder of the programs' stderr, one file per match and seat "
                             "(default: a new temporary folder, printed at start)")
    parser.add_argument("--secret", default=os.environ.get(SECRET_ENV),
                        help="the bot's secret: requests without a valid Referee-Signature "
                             f"are refused with 401 (default: ${SECRET_ENV})")
    parser.add_argument("--max-programs", type=int, default=DEFAULT_MAX_PROGRAMS,
                        help="programs running at once, one per match and seat in play; at "
                             "the cap the least recently used idle one is stopped "
                             f"(default {DEFAULT_MAX_PROGRAMS})")
    parser.add_argument("--idle-timeout", type=float, default=DEFAULT_IDLE_TIMEOUT_S,
                        metavar="SECONDS",
                        help="stop a program whose match sent nothing for this long "
                             f"(default {DEFAULT_IDLE_TIMEOUT_S:g})")
    parser.add_argument("--stderr-mb", type=int, default=DEFAULT_STDERR_MB, metavar="MB",
                        help="what a program may write on stderr in its match, kept in its "
                             "log file; past it the pipe is closed and its writes fail "
                             f"(default {DEFAULT_STDERR_MB})")
    parser.add_argument("--logs-mb", type=int, default=DEFAULT_LOGS_MB, metavar="MB",
                        help="the logs of ended matches kept in DIR, in all: past it the "
                             "oldest are removed; 0 keeps every one "
                             f"(default {DEFAULT_LOGS_MB})")
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD [ARGS...]",
                        help="the program and its arguments, after --")


def run(args: argparse.Namespace) -> int:
    argv = args.command[1:] if args.command[:1] == ["--"] else args.command
    try:
        check_runnable(argv)
    except BadCommand as error:
        print(f"error: {error} (usage: referee bridge --port P -- CMD [ARGS...])",
              file=sys.stderr)
        return 2
    for option, in_range, what in (
            ("--max-programs", args.max_programs >= 1, "positive"),
            ("--idle-timeout", args.idle_timeout > 0, "positive"),
            ("--stderr-mb", args.stderr_mb >= 1, "positive"),
            ("--logs-mb", args.logs_mb >= 0, "0 (keep every log) or positive")):
        if not in_range:
            print(f"error: {option} must be {what}", file=sys.stderr)
            return 2
    log_dir = args.logs or Path(tempfile.mkdtemp(prefix="referee-bridge-"))
    config = BridgeConfig(tuple(argv), log_dir, args.secret or None, args.max_programs,
                          args.idle_timeout, stderr_limit=args.stderr_mb << 20,
                          logs_limit=args.logs_mb << 20)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if not _is_loopback(args.host) and not config.secret:
        print(f"warning: listening on {args.host} without a secret: anyone who reaches this "
              f"port can run {argv[0]} (set --secret or ${SECRET_ENV})", file=sys.stderr)
    try:
        asyncio.run(serve(config, args.host, args.port))
    except OSError as error:
        print(f"error: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr)
        return 1
    return 0


async def serve(config: BridgeConfig, host: str, port: int) -> None:
    """Serve until SIGINT or SIGTERM, then stop every program."""
    bridge = Bridge(config)
    bound = await bridge.start(host, port)
    print(f"bridge: serving {' '.join(config.command)} as a bot at http://{host}:{bound}/ "
          f"(stderr of each match in {config.log_dir}; at most {config.max_programs} "
          f"programs at once{'; signatures checked' if config.secret else ''})", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await bridge.close()


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(host).is_loopback
    return False
