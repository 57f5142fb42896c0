"""A tiny SDK for bots (design.md section 4): write `choose`, call `serve` (an HTTP push
bot) or `serve_stdio` (a stdin/stdout program for `referee bridge` and `cmd:`).

    from bots.python.sdk import serve

    def choose(observation, legal_actions):
        return legal_actions[0]

    serve(choose, port=8001)

The referee POSTs {"protocol": "referee/1", "type": "decision", "match_id", "game",
"seat", "step", "deadline_ms", "observation", "legal_actions"} (and "clock" on a match
with a time control) and expects 200 {"action": {...}}. A `choose` with a third parameter
gets the whole decision (its clock: see `budget_ms`), and may return an `Answer` to send
"debug" and "info" with its action. A bot registered with updates gets {"type": "update",
...} between its decisions: answered 200 {} at once and handed to `on_update`. After the
match, {"type": "result", "match_id", "game", "seat",
"result", "replay_url"}, answered 200 and handed to the optional `on_result` callback. A
ladder's {"type": "notice", "ladder_id", "bot_id", "status", "reasons"} (its entry
rejected or suspended) is answered 200 and printed on stderr. A body without "type" is a
decision (older referees). Each answer says "log": "new": the SDK keeps each match's log
(`LogKeeper`), so the referee sends only the entries added since the seat's last decision
(from `log_from` on) and `choose` still sees the whole log. Given the bot's secret (`secret=`, or
the environment's REFEREE_BOT_SECRET) every request must carry a valid Referee-Signature
header, else it is refused with 401.
Replies go out in one write with TCP_NODELAY: written in two pieces on a kept-alive
connection, Nagle's algorithm and delayed ACKs add about 40 ms to every decision.
Standard library only, so a bot needs nothing installed.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import inspect
import json
import os
import sys
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import IO, Any

PROTOCOL = "referee/1"
DECISION, UPDATE, RESULT, NOTICE = "decision", "update", "result", "notice"
SIGNATURE_HEADER = "Referee-Signature"
SECRET_ENV = "REFEREE_BOT_SECRET"
SIGNATURE_TOLERANCE_S = 300
MAX_BODY_BYTES = 16 * 1024 * 1024
IDLE_TIMEOUT_S = 120  # as `referee bridge`: the referee reconnects when it needs to
LOG_NEW = "new"  # an answer's "log": the next request may carry the new log entries only
KEPT_LOGS = 256  # the matches whose logs a bot keeps (the least recently asked forgotten)
Choose = Callable[..., Any]  # (observation, legal_actions[, decision]) -> action | Answer
OnResult = Callable[[dict], None]
OnUpdate = Callable[[dict], None]


@dataclass
class Answer:
    """An action with what the bot says of its thinking: `debug` (at most 4 KiB) and `info`
    (a JSON object of at most 1 KiB, e.g. {"depth": 7, "score": 0.31}); both kept in the
    replay beside the move, shown to the bot's owner and the admin while the match runs."""

    action: dict
    debug: str | None = None
    info: dict | None = None

    def body(self) -> dict:
        said = {"debug": self.debug, "info": self.info}
        return {"action": self.action, **{k: v for k, v in said.items() if v is not None}}


class LogKeeper:
    """The log of each match a bot plays, as its seat has seen it, so that the referee may
    send only the new entries (docs/bots.md, The log since your last decision): a decision
    with `log_from` gets the entries kept before it back in its observation."""

    def __init__(self, matches: int = KEPT_LOGS):
        self.matches = matches
        self.logs: OrderedDict[tuple[str, int], list] = OrderedDict()
        self.lock = threading.Lock()

    def complete(self, message: dict) -> bool:
        """Make the decision's observation hold the whole log; False when it cannot (the
        entries before `log_from` are not kept here: a restarted or forgetful bot), the
        observation's log then left as it came."""
        log, start = message["observation"].get("log"), message.get("log_from", 0)
        key = _match_seat(message)
        if not isinstance(log, list) or type(start) is not int or start < 0 or key is None:
            return False
        with self.lock:
            kept = self.logs.pop(key, [])
            if start > len(kept):
                return False
            del kept[start:]
            kept.extend(log)
            self.logs[key] = kept
            while len(self.logs) > self.matches:
                self.logs.popitem(last=False)
            message["observation"]["log"] = list(kept)
        return True

    def forget(self, message: dict) -> None:
        """Drop the log of a match that ended (its result notice)."""
        with self.lock:
            self.logs.pop(_match_seat(message), None)


def _match_seat(message: dict) -> tuple[str, int] | None:
    """The (match id, seat) a message names; None when they are not a string and an integer
    (whatever a sender wrote there, never a key this bot cannot hold)."""
    match_id, seat = message.get("match_id"), message.get("seat")
    return (match_id, seat) if isinstance(match_id, str) and type(seat) is int else None


def answer_body(choose: Choose, message: dict, logs: LogKeeper | None = None) -> dict:
    """The answer to a decision: `choose`'s action (given the whole decision too when it
    takes three parameters), with its debug and info when it returned an `Answer`; with a
    `LogKeeper`, the observation's whole log put back first and the answer asking for the
    new entries only next time."""
    kept = logs is not None and logs.complete(message)
    arguments = [message["observation"], message["legal_actions"]]
    if _takes_decision(choose):
        arguments.append(message)
    chosen = choose(*arguments)
    body = chosen.body() if isinstance(chosen, Answer) else {"action": chosen}
    if kept:
        body["log"] = LOG_NEW
    return body


def _takes_decision(choose: Choose) -> bool:
    try:
        parameters = inspect.signature(choose).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 3 or any(p.kind == p.VAR_POSITIONAL for p in parameters)


class BadRequest(ValueError):
    """The request is not a referee/1 message."""


class SignatureError(ValueError):
    """The request's Referee-Signature is missing, malformed, stale or wrong."""


def budget_ms(payload: dict[str, Any]) -> float:
    """How long to think on this decision: a twentieth of the seat's clock plus most of the
    increment, on a match with a clock (docs/bots.md, Clocks); else most of the deadline.
    Never within 50 ms of the decision's deadline."""
    clock = payload.get("clock")
    if clock is None:
        return payload["deadline_ms"] * 0.8
    mine = clock["remaining_ms"][payload["seat"]]
    return max(min(mine / 20 + clock["increment_ms"] * 0.8, clock["deadline_ms"] - 50), 0)


def verify_signature(secret: str, header: str | None, body: bytes, now: float,
                     tolerance_s: int = SIGNATURE_TOLERANCE_S) -> None:
    """Return when `header` (`t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>`,
    possibly with several v1 values) signs `body` within `tolerance_s` of `now`; raise
    SignatureError saying what is wrong otherwise. The referee's side: referee/match/signing.py."""
    if not header:
        raise SignatureError(f"the {SIGNATURE_HEADER} header is missing")
    pairs = [part.strip().partition("=") for part in header.split(",")]
    stamps = [value for key, _, value in pairs if key == "t"]
    candidates = [value.lower() for key, _, value in pairs if key == "v1"]
    if (len(header) > 4096 or len(stamps) != 1 or not candidates or len(stamps[0]) > 12
            or not (stamps[0].isascii() and stamps[0].isdigit())):
        raise SignatureError(f"malformed {SIGNATURE_HEADER} header: expected t=...,v1=...")
    if abs(now - int(stamps[0])) > tolerance_s:
        raise SignatureError(f"the signature's timestamp is more than {tolerance_s} s from now")
    expected = hmac.new(secret.encode(), stamps[0].encode() + b"." + body,
                        hashlib.sha256).hexdigest().encode()
    if not any(hmac.compare_digest(expected, candidate.encode()) for candidate in candidates):
        raise SignatureError("the signature does not match (wrong secret or altered body)")


def parse_message(body: bytes) -> dict[str, Any]:
    """The message of a request body: a decision (its "type" set to "decision" when it
    came without one) or a result notice; BadRequest saying what is wrong."""
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError) as error:  # a 5,000-digit integer is a ValueError
        raise BadRequest(f"the body is not JSON: {error}") from None
    if not isinstance(payload, dict):
        raise BadRequest("the body must be a JSON object")
    if payload.get("protocol") != PROTOCOL:
        raise BadRequest(f'expected "protocol": "{PROTOCOL}", got {payload.get("protocol")!r}')
    kind = payload.setdefault("type", DECISION)
    if kind in (RESULT, UPDATE, NOTICE):
        return payload
    if kind != DECISION:
        raise BadRequest(f'unknown "type" {kind!r}: expected "{DECISION}", "{UPDATE}", '
                         f'"{RESULT}" or "{NOTICE}"')
    if not isinstance(payload.get("legal_actions"), list) or not payload["legal_actions"]:
        raise BadRequest('"legal_actions" must be a non-empty list')
    if not isinstance(payload.get("observation"), dict):
        raise BadRequest('"observation" must be an object')
    return payload


def resolve_secret(secret: str | None) -> str | None:
    """The secret to check signatures with: `secret`, else $REFEREE_BOT_SECRET; "" or
    unset: signatures are not checked."""
    return (os.environ.get(SECRET_ENV) if secret is None else secret) or None


def handle_result(on_result: OnResult | OnUpdate | None, message: dict) -> None:
    """Hand a result notice (or an update) to the callback; its failure is printed, never
    raised."""
    if on_result is None:
        return
    try:
        on_result(message)
    except Exception:
        traceback.print_exc()


def handler_for(choose: Choose, verbose: bool = False, secret: str | None = None,
                on_result: OnResult | None = None, on_update: OnUpdate | None = None,
                keep_log: bool = True) -> type[BaseHTTPRequestHandler]:
    """A request handler class that answers every decision with `choose`'s action
    (`keep_log`: keep the logs and ask for their new entries only, `LogKeeper`)."""
    secret = resolve_secret(secret)
    logs = LogKeeper() if keep_log else None

    class DecisionHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the referee reuses its connection
        disable_nagle_algorithm = True  # TCP_NODELAY
        wbufsize = 1 << 16  # buffer the headers and body, flushed in one write
        timeout = IDLE_TIMEOUT_S  # a connection silent this long is closed: idle ones
        # held by anyone reaching the port would otherwise use up its threads and files

        def do_POST(self) -> None:
            length = self.headers.get("Content-Length") or "0"
            if not (length.isascii() and length.isdigit()) or int(length) > MAX_BODY_BYTES:
                self.reply(400, {"error": f"bad Content-Length {length[:20]!r}"}, close=True)
                return
            body = self.rfile.read(int(length))
            if secret:
                try:
                    verify_signature(secret, self.headers.get(SIGNATURE_HEADER), body,
                                     time.time())
                except SignatureError as error:
                    self.reply(401, {"error": str(error)})
                    return
            try:
                message = parse_message(body)
            except BadRequest as error:
                self.reply(400, {"error": str(error)})
                return
            if message["type"] == RESULT:
                if logs is not None:
                    logs.forget(message)
                handle_result(on_result, message)
                self.reply(200, {})
                return
            if message["type"] == UPDATE:
                self.reply(200, {})  # at once: the referee ignores the answer
                handle_result(on_update, message)
                return
            if message["type"] == NOTICE:
                self.reply(200, {})
                print(f"referee notice: {json.dumps(message)}", file=sys.stderr, flush=True)
                return
            try:
                answer = answer_body(choose, message, logs)
            except Exception as error:  # the bot's own bug: say so instead of hanging up
                traceback.print_exc()
                self.reply(500, {"error": f"choose() raised {error!r}"})
                return
            self.reply(200, answer)

        def reply(self, status: int, body: dict, close: bool = False) -> None:
            data = json.dumps(body, separators=(",", ":")).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            if verbose:
                super().log_message(format, *args)

    return DecisionHandler


class BotServer(ThreadingHTTPServer):
    """A thread per connection; a backlog deep enough for the many matches a referee may
    play against the bot at once (the standard library's default is 5)."""

    daemon_threads = True
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A referee that closed its connection (a reset while the next request was
        awaited) is routine, not a traceback on stderr; anything else is reported."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def make_server(choose: Choose, port: int = 0, host: str = "127.0.0.1",
                verbose: bool = False, secret: str | None = None,
                on_result: OnResult | None = None, on_update: OnUpdate | None = None,
                keep_log: bool = True) -> ThreadingHTTPServer:
    """A bound, not yet serving, server (port 0 picks a free one: see `server_address`).
    `secret`: None reads $REFEREE_BOT_SECRET, "" checks no signature; `keep_log`: see
    `LogKeeper` (False: every request carries the whole log)."""
    return BotServer((host, port), handler_for(choose, verbose, secret, on_result, on_update,
                                               keep_log))


def serve(choose: Choose, port: int = 8001, host: str = "127.0.0.1",
          verbose: bool = False, secret: str | None = None,
          on_result: OnResult | None = None, on_update: OnUpdate | None = None,
          keep_log: bool = True) -> None:
    """Answer the referee's decisions with `choose` until interrupted."""
    server = make_server(choose, port, host, verbose, secret, on_result, on_update, keep_log)
    print(f"bot listening on http://{host}:{server.server_address[1]}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def serve_stdio(choose: Choose, on_result: OnResult | None = None,
                stdin: IO[str] | None = None, stdout: IO[str] | None = None,
                on_update: OnUpdate | None = None, keep_log: bool = True) -> None:
    """Answer decisions read one line each on stdin with one line on stdout, until the
    result notice (handed to `on_result`) or EOF: a program for `referee bridge -- CMD` or
    `cmd:CMD`. An update line is handed to `on_update`, never answered. A line that is not
    a decision, or a `choose` that raises, is answered {"error": ...} (the referee records
    `malformed`) and the reason printed on stderr."""
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    logs = LogKeeper() if keep_log else None
    for line in stdin:
        try:
            message = parse_message(line.encode())
            if message["type"] == RESULT:
                handle_result(on_result, message)
                return
            if message["type"] == UPDATE:
                handle_result(on_update, message)
                continue
            answer = json.dumps(answer_body(choose, message, logs), separators=(",", ":"))
        except Exception as error:
            traceback.print_exc()
            answer = json.dumps({"error": f"{type(error).__name__}: {error}"})
        stdout.write(answer + "\n")
        stdout.flush()


def bot_arguments(description: str) -> argparse.ArgumentParser:
    """The command line every example bot shares: --host, --port, --seed, --verbose, --stdio."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--seed", type=int, default=None, help="seed of the bot's own choices")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    parser.add_argument("--stdio", action="store_true",
                        help="no HTTP: read decisions on stdin, answer on stdout "
                             "(for `referee bridge` and cmd:)")
    return parser


def run_bot(make_choose: Callable[[int | None], Choose], description: str,
            argv: list[str] | None = None) -> int:
    """Parse the shared command line and run the bot that `make_choose(seed)` builds: an
    HTTP server (signatures checked when $REFEREE_BOT_SECRET is set), or with --stdio a
    stdin/stdout program."""
    args = bot_arguments(description).parse_args(sys.argv[1:] if argv is None else argv)
    if args.stdio:
        serve_stdio(make_choose(args.seed))
    else:
        serve(make_choose(args.seed), args.port, args.host, args.verbose)
    return 0
