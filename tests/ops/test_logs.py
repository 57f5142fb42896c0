"""referee.logs in one process: the JSON and text formats, the context fields of `extra=`,
and the scrubbing of anything that looks like a token."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import threading
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee import logs
from referee.redis_server import free_port
from tests.support.apitest import ROOT
from tests.support.python_process import printed_by

TOKEN = "tok-3c1f9a7e5d2b8046"


@pytest.fixture
def logging_restored(monkeypatch):
    """Put the root logger, warnings capture and the except hooks back after the test."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    hooks = sys.excepthook, threading.excepthook
    yield monkeypatch
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(False)
    sys.excepthook, threading.excepthook = hooks


@pytest.mark.parametrize("line", [
    f"Authorization: Bearer {TOKEN}",
    f"{{'Authorization': 'Basic {TOKEN}'}}",
    f'"authorization": "{TOKEN}"',
    f"sent Bearer {TOKEN} to the API",
    f"GET /health?token={TOKEN}&x=1",
    f"REFEREE_ADMIN_TOKEN={TOKEN}",
    f'{{"secret": "{TOKEN}"}}',
    f"password: {TOKEN}",
    f"redis://default:{TOKEN}@127.0.0.1:6379/0",
])
def test_scrub_masks_token_looking_values(line):
    scrubbed = logs.scrub(line)
    assert TOKEN not in scrubbed and logs.REDACTED in scrubbed


def test_scrub_keeps_ordinary_text():
    line = "match m-1f2e step 12: seat 1 timeout after 2004.1 ms (tokens per seat: 1)"
    assert logs.scrub(line) == line


# The patterns before they were made linear (what a log line of a 4,000-character path cost
# the API ~0.5 s of CPU): the oracle of what must be masked.
BACKTRACKING_PATTERNS = (
    (re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?:(?:bearer|basic)\s+)?"
                r"[^\s\"',;}]+"), r"\1" + logs.REDACTED),
    (re.compile(r"(?i)\b(bearer\s+)[\w.~+/=-]+"), r"\1" + logs.REDACTED),
    (re.compile(r"(?i)([\w-]*(?:token|secret|password|passwd|api[_-]?key)[\w-]*[\"']?\s*"
                r"[:=]\s*[\"']?)[^\s\"'&,;}]+"), r"\1" + logs.REDACTED),
    (re.compile(r"(\w+://[^/\s:@]*:)[^@\s/]+@"), r"\1" + logs.REDACTED + "@"),
)
FRAGMENTS = ["token", "TOKEN", "my_token", "secret", "password", "passwd", "api_key", "api-key",
             "apikey", "Authorization", "authorization", "bearer", "Bearer", "basic", "redis",
             "://", ":", "=", "@", "/", "'", '"', " ", "\t", "&", ",", ";", "}", "-", "_", "?",
             "a", "Z", "9", ".", "~", "+", "é"]


def scrubbed_by_backtracking(text: str) -> str:
    for pattern, replacement in BACKTRACKING_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join))
def test_scrub_masks_exactly_what_the_backtracking_patterns_masked(text):
    assert logs.scrub(text) == scrubbed_by_backtracking(text)


def test_scrub_is_linear_in_the_length_of_what_a_caller_sends():
    """Texts of 1,000,000 characters shaped to make a backtracking pattern retry every start
    (a path of word characters, a scheme without credentials, a keyword without a value):
    linear, each takes well under a second; the patterns before took ~0.6 s at 4,000
    characters, so days at this length."""
    script = ("from referee import logs\n"
              "n = 1_000_000\n"
              "for text in ['/' + 'a' * n, 'a://' + 'b' * n, 'a://:' + 'x' * n, 'token' * (n // 5),"
              " 'authorization' + ' ' * n, 'bearer' + ' ' * n, 'x' + ' token' * (n // 6)]:\n"
              "    logs.scrub(text)\n"
              "print('done')\n")
    assert printed_by(script) == "done"


def test_json_lines_carry_time_level_logger_message_and_the_context(logging_restored, capsys):
    logging_restored.setenv("REFEREE_LOG_FORMAT", "json")
    logs.configure("worker")
    log = logging.getLogger("tournament.jobs")
    log.warning("seat %d: %s fault", 1, "timeout", extra={
        "match_id": "m-1", "bot_id": "bot-2", "step": 12, "fault": "timeout",
        "duration_ms": 2004.1, "seat_token": TOKEN,
        "request": {"headers": {"Authorization": f"Bearer {TOKEN}"}, "url": "/x"}})
    try:
        raise RuntimeError(f"failed with Bearer {TOKEN}")
    except RuntimeError:
        log.exception("match failed", extra={"match_id": "m-1"})
    lines = capsys.readouterr().err.splitlines()
    first, second = (json.loads(line) for line in lines)
    assert first["level"] == "warning" and first["logger"] == "tournament.jobs"
    assert first["component"] == "worker" and first["message"] == "seat 1: timeout fault"
    assert first["time"].endswith("+00:00")
    assert {key: first[key] for key in logs.CONTEXT_FIELDS} == {
        "match_id": "m-1", "bot_id": "bot-2", "step": 12, "fault": "timeout",
        "duration_ms": 2004.1}
    assert first["seat_token"] == logs.REDACTED
    assert first["request"] == {"headers": {"Authorization": logs.REDACTED}, "url": "/x"}
    assert second["level"] == "error" and "RuntimeError" in second["exception"]
    assert TOKEN not in "\n".join(lines)


def test_warnings_and_uncaught_exceptions_are_json_lines_too(logging_restored, capsys):
    logging_restored.setenv("REFEREE_LOG_FORMAT", "json")
    logs.configure("api")
    warnings.warn("an old API", DeprecationWarning, stacklevel=1)
    try:
        raise ValueError("boom")
    except ValueError:
        sys.excepthook(*sys.exc_info())
    entries = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert entries[0]["logger"] == "py.warnings" and "an old API" in entries[0]["message"]
    assert entries[1]["level"] == "critical" and "ValueError: boom" in entries[1]["exception"]


def test_text_is_the_default_one_readable_line_per_record(logging_restored, capsys):
    logging_restored.delenv("REFEREE_LOG_FORMAT", raising=False)
    logs.configure("worker")
    logging.getLogger("tournament.jobs").info(
        "match finished", extra={"match_id": "m-1", "duration_ms": 12.5, "token": TOKEN})
    line = capsys.readouterr().err.strip()
    assert "INFO [worker] tournament.jobs: match finished" in line
    assert "match_id=m-1 duration_ms=12.5" in line and TOKEN not in line
    with pytest.raises(ValueError):
        json.loads(line)


def test_configuring_again_replaces_the_handler(logging_restored, capsys):
    logging_restored.setenv("REFEREE_LOG_FORMAT", "json")
    logs.configure("demo")
    logs.configure("demo")
    logging.getLogger("referee").info("once")
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_an_unknown_format_or_level_stops_the_process_naming_the_variable(logging_restored):
    logging_restored.setenv("REFEREE_LOG_FORMAT", "xml")
    with pytest.raises(SystemExit, match="REFEREE_LOG_FORMAT='xml'"):
        logs.configure("api")
    logging_restored.setenv("REFEREE_LOG_FORMAT", "json")
    logging_restored.setenv("REFEREE_LOG_LEVEL", "chatty")
    with pytest.raises(SystemExit, match="REFEREE_LOG_LEVEL='CHATTY'"):
        logs.configure("api")
    logging_restored.setenv("REFEREE_LOG_LEVEL", "warning")
    logs.configure("api")
    assert logging.getLogger().level == logging.WARNING


def test_serve_with_json_logs_refuses_to_make_up_an_admin_token(redis_url):
    """A generated token would have to be printed into the logs: it asks for one instead."""
    env = {key: value for key, value in os.environ.items() if key != "REFEREE_ADMIN_TOKEN"}
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "serve", "--port", str(free_port())],
        env={**env, "REFEREE_LOG_FORMAT": "json", "REDIS_URL": redis_url,
             "PYTHONPATH": str(ROOT)},
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    (entry,) = [json.loads(line) for line in done.stderr.splitlines()]
    assert entry["level"] == "error" and "REFEREE_ADMIN_TOKEN is not set" in entry["message"]


def test_announce_prints_in_text_mode_and_logs_in_json_mode(logging_restored, capsys):
    logging_restored.delenv("REFEREE_LOG_FORMAT", raising=False)
    logs.configure("api")
    logs.announce(logging.getLogger("referee"), "listening on http://127.0.0.1:1")
    assert capsys.readouterr().out == "listening on http://127.0.0.1:1\n"
    logging_restored.setenv("REFEREE_LOG_FORMAT", "json")
    logs.configure("api")
    logs.announce(logging.getLogger("referee"), "listening on http://127.0.0.1:1")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert json.loads(captured.err)["message"] == "listening on http://127.0.0.1:1"


def test_a_throttled_kind_of_line_is_logged_once_a_period_with_the_count_held_back(caplog):
    """A full disk deferred every waiting match every 5 s, each with an error line
    (`tournament.driver`): one a minute now, saying how many were held back."""
    now = [100.0]
    throttled = logs.Throttled(logging.getLogger("referee.throttle-test"), 60.0,
                               clock=lambda: now[0])
    with caplog.at_level(logging.ERROR, logger="referee.throttle-test"):
        for second in range(0, 125, 5):  # 25 failures in 2 minutes
            now[0] = 100.0 + second
            throttled.log(logging.ERROR, "match %s deferred: %s", f"m{second}", "disk full")
    assert [record.getMessage() for record in caplog.records] == [
        "match m0 deferred: disk full",
        "match m60 deferred: disk full (11 more like it in the last 60 s)",
        "match m120 deferred: disk full (11 more like it in the last 60 s)"]
