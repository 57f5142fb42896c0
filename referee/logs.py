"""Logging of the referee's processes: the API (gunicorn's access and error logs included),
the workers (rq's own lines included), the dashboard and the demo.

`configure(component)` sets the root logger up once per process. `REFEREE_LOG_FORMAT`
chooses the format: `text` (default: one readable line per record) or `json` (one JSON
object per line: time, level, logger, component, message, and whichever context fields the
record carries). Context travels as `extra=`:

    log.warning("bot fault", extra={"match_id": m, "bot_id": b, "step": 12,
                                    "fault": "timeout", "duration_ms": 2004.1})

A token never reaches a log line: the Authorization header's value, `Bearer ...`, the
password of a URL and any `token`/`secret`/`password`/`key=value` are masked in messages,
and a context field whose name says token, secret, password, authorization or cookie is
masked whole. `REFEREE_LOG_LEVEL` (default INFO) sets the level.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import orjson
from gunicorn.glogging import Logger as GunicornLogger

FORMAT_VARIABLE = "REFEREE_LOG_FORMAT"
LEVEL_VARIABLE = "REFEREE_LOG_LEVEL"
FORMATS = ("text", "json")
CONTEXT_FIELDS = ("match_id", "bot_id", "step", "fault", "duration_ms")
REDACTED = "[redacted]"
SECRET_NAME = re.compile(r"token|secret|password|passwd|authorization|cookie|api[_-]?key",
                         re.IGNORECASE)
# Each pattern is linear in the text's length: a match starts only where a run of word
# characters starts, and the runs are taken whole (possessive quantifiers, no backtracking
# into them). A request path or query of 4,000 word characters, which an anonymous caller
# chooses, otherwise cost the API ~0.5-1 s of CPU to log.
SECRET_PATTERNS = (
    # Authorization: Bearer abc / "authorization": "Basic abc"
    (re.compile(r"(?i)(authorization[\"']?\s*+[:=]\s*+[\"']?)(?:(?:bearer|basic)\s++)?"
                r"[^\s\"',;}]+"), r"\1" + REDACTED),
    (re.compile(r"(?i)\b(bearer\s++)[\w.~+/=-]+"), r"\1" + REDACTED),
    # admin_token=abc, ?token=abc, "secret": "abc"
    (re.compile(r"(?i)(?<![\w-])((?=[\w-]*?(?:token|secret|password|passwd|api[_-]?key))"
                r"[\w-]++[\"']?\s*+[:=]\s*+[\"']?)[^\s\"'&,;}]+"), r"\1" + REDACTED),
    # redis://user:password@host
    (re.compile(r"(?<!\w)(\w++://[^/\s:@]*+:)[^@\s/]++@"), r"\1" + REDACTED + "@"),
)
# Attributes every LogRecord has: anything else on a record came through `extra=`.
RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message", "asctime", "taskName"}
MATCH_PATH = re.compile(r"^/(?:ui/play/|matches/)([\w-]+)")
_component = "referee"  # this process's, as given to `configure`


def scrub(text: str) -> str:
    """`text` with every token-looking value masked."""
    for pattern, replacement in SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def scrub_value(name: str, value: Any) -> Any:
    """A context field as logged: masked whole when its name says it is secret."""
    if SECRET_NAME.search(name):
        return REDACTED
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        return {str(key): scrub_value(str(key), item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_value("", item) for item in value]
    return value


def context_of(record: logging.LogRecord) -> dict[str, Any]:
    """The fields a record got through `extra=`, scrubbed."""
    return {name: scrub_value(name, value) for name, value in vars(record).items()
            if name not in RECORD_ATTRIBUTES and not name.startswith("_")}


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def __init__(self, component: str):
        super().__init__()
        self.component = component

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(
                timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "component": self.component,
            "message": scrub(record.getMessage()),
            **context_of(record),
        }
        if record.exc_info:
            entry["exception"] = scrub(self.formatException(record.exc_info))
        return orjson.dumps(entry, default=str).decode()


class TextFormatter(logging.Formatter):
    """`time level logger: message key=value...`, scrubbed like the JSON lines."""

    def __init__(self, component: str):
        super().__init__("%(asctime)s %(levelname)s [" + component + "] %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        context = " ".join(f"{name}={value}" for name, value in context_of(record).items())
        line = super().format(record)
        return scrub(f"{line} {context}" if context else line)


def log_format(environ: Mapping[str, str] | None = None) -> str:
    """`text` or `json`, from REFEREE_LOG_FORMAT (ValueError naming it otherwise)."""
    value = (os.environ if environ is None else environ).get(FORMAT_VARIABLE, "").strip()
    value = value.lower() or "text"
    if value not in FORMATS:
        raise ValueError(f"{FORMAT_VARIABLE}={value!r}: choose one of {', '.join(FORMATS)}")
    return value


def log_level() -> int:
    """The level named by REFEREE_LOG_LEVEL (default INFO; ValueError naming it otherwise)."""
    name = os.environ.get(LEVEL_VARIABLE, "").strip().upper() or "INFO"
    level = logging.getLevelNamesMapping().get(name)
    if level is None:
        raise ValueError(f"{LEVEL_VARIABLE}={name!r}: choose DEBUG, INFO, WARNING or ERROR")
    return level


def json_enabled() -> bool:
    return log_format() == "json"


def configure(component: str) -> None:
    """Send every log record of this process to stderr in the chosen format, Python's
    warnings included (and in JSON mode uncaught exceptions too, so that no line of the
    process is anything but JSON); called again, replaces the handler it installed before.
    An unknown REFEREE_LOG_FORMAT or REFEREE_LOG_LEVEL stops the process with a message
    naming it."""
    global _component
    try:
        chosen, level = log_format(), log_level()
    except ValueError as error:
        raise SystemExit(f"referee: {error}") from None
    _component = component
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, "_referee", False)]:
        root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(component) if chosen == "json"
                         else TextFormatter(component))
    handler._referee = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)
    if chosen == "json":
        sys.excepthook = log_uncaught
        threading.excepthook = lambda args: log_uncaught(args.exc_type, args.exc_value,
                                                         args.exc_traceback)


def log_uncaught(kind: type[BaseException], error: BaseException | None,
                 _trace: TracebackType | None) -> None:
    """An exception nothing caught, logged with its traceback (the error's own)."""
    logging.getLogger("referee").critical("uncaught %s", kind.__name__,
                                          exc_info=error if error is not None else False)


def announce(logger: logging.Logger, message: str, **context: Any) -> None:
    """A line for the person who started the process: printed as it is in text mode (where
    people and scripts read it on stdout), a log record in JSON mode (where every line must
    be JSON)."""
    if json_enabled():
        logger.info(message, extra=context)
    else:
        print(message, flush=True)


class Throttled:
    """A logger's lines of one kind, at most one every `every_s` seconds in a process: the
    first at once, the next saying how many were held back meanwhile. (A full disk defers
    every waiting match every few seconds: its log must not fill what is left.)"""

    def __init__(self, logger: logging.Logger, every_s: float,
                 clock: Callable[[], float] = time.monotonic):
        self.logger, self.every_s, self.clock = logger, every_s, clock
        self.last: float | None = None
        self.held = 0
        self.lock = threading.Lock()

    def log(self, level: int, message: str, *args: Any) -> None:
        with self.lock:
            now = self.clock()
            if self.last is not None and now - self.last < self.every_s:
                self.held += 1
                return
            held, self.held, self.last = self.held, 0, now
        if held:
            message += f" ({held} more like it in the last {self.every_s:g} s)"
        self.logger.log(level, message, *args)


class JsonGunicornLogger(GunicornLogger):
    """gunicorn's logger with JSON lines: its error log through `JsonFormatter`, and one
    record per request with method, path, status, duration_ms, bytes and the client's
    address (no header, so no Authorization; the query string scrubbed)."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                handler.setFormatter(JsonFormatter(_component))

    def access(self, resp: Any, req: Any, environ: dict, request_time: Any) -> None:
        if not self.access_log_enabled:
            return
        atoms = self.atoms(resp, req, environ, request_time)
        path = atoms["U"]
        status = getattr(resp, "status_code", None)
        context: dict[str, Any] = {
            "method": atoms["m"], "path": path, "query": atoms["q"], "status": status,
            "duration_ms": round(request_time.total_seconds() * 1000, 3),
            "bytes": atoms["B"], "remote_addr": atoms["h"]}
        if match := MATCH_PATH.match(path):
            context["match_id"] = match.group(1)
        self.access_log.info("%s %s %s", atoms["m"], path, status, extra=context)


def gunicorn_options() -> dict[str, Any]:
    """The gunicorn settings of the chosen format: JSON lines through `JsonGunicornLogger`."""
    return {"logger_class": JsonGunicornLogger} if json_enabled() else {}
