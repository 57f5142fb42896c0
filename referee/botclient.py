"""The referee's side of the push bot protocol (design.md section 4, a public contract).

One `BotClient` per bot URL keeps a `requests.Session`, so consecutive decisions reuse the
same keep-alive connection (urllib3 sets TCP_NODELAY, so a request leaves in one go), and
reads the environment's proxy settings once rather than on every call.
`decide` never raises for anything the bot does: every failure becomes a `BotReply` with a
fault code the runner's failure policy understands.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import orjson
import requests
import urllib3

PROTOCOL = "referee/1"
RAW_LIMIT = 2000
MAX_REPLY_BYTES = 1 << 20
_CHUNK = 16384


class Fault:
    """The fault codes of the bot protocol, as recorded in replays."""

    TIMEOUT = "timeout"
    CRASH = "crash"
    MALFORMED = "malformed"
    ILLEGAL = "illegal"
    ALL = (TIMEOUT, CRASH, MALFORMED, ILLEGAL)


@dataclass
class BotReply:
    """What a bot answered to one decision, or why it gave no usable answer."""

    action: dict | None
    fault: str | None
    raw: str
    elapsed_ms: float
    detail: str = ""


class _TooSlow(Exception):
    """The reply was still arriving when the deadline passed."""


class _TooLarge(Exception):
    """The reply body exceeded MAX_REPLY_BYTES."""


class BotClient:
    """Calls one bot's URL per decision with a deadline covering connect, send and read."""

    def __init__(self, url: str, deadline_ms: int = 2000):
        self.url = url
        self.deadline_ms = deadline_ms
        self.session = _session_for(url)

    def decide(self, payload: dict) -> BotReply:
        """POST one decision request; the reply is judged but the action is not checked
        against the rules (that is the runner's job, with the engine)."""
        body = orjson.dumps(payload)
        started = time.monotonic()
        deadline = started + self.deadline_ms / 1000
        try:
            status, raw = self._post(body, deadline)
        except (requests.Timeout, _TooSlow):
            return self._timeout(started)
        except _TooLarge:
            return _fault(Fault.MALFORMED, "", started,
                          f"the answer is larger than {MAX_REPLY_BYTES} bytes")
        except requests.RequestException as error:
            if time.monotonic() >= deadline:
                return self._timeout(started)
            return _fault(Fault.CRASH, "", started, f"connection error: {_short(error)}")
        text = raw.decode("utf-8", errors="replace")
        if status != 200:
            return _fault(Fault.CRASH, text, started, f"the bot answered HTTP {status}, not 200")
        return _judge_body(raw, text, started)

    def close(self) -> None:
        self.session.close()

    def _timeout(self, started: float) -> BotReply:
        return _fault(Fault.TIMEOUT, "", started,
                      f"no complete answer within the deadline of {self.deadline_ms} ms")

    def _post(self, body: bytes, deadline: float) -> tuple[int, bytes]:
        """Send the request and read the whole body, giving up at `deadline`.

        The body is read with `read1` (whatever has arrived) so that a bot trickling its
        answer byte by byte cannot stretch the deadline."""
        seconds = max(deadline - time.monotonic(), 0.001)
        response = self.session.post(self.url, data=body, timeout=(seconds, seconds),
                                     stream=True, allow_redirects=False)
        try:
            return response.status_code, _read_until(response.raw, deadline)
        finally:
            response.close()


def _session_for(url: str) -> requests.Session:
    """A Session with the environment's settings for `url` (proxies, no_proxy, CA bundle,
    .netrc) read once: with `trust_env` requests reads them again on every call, which costs
    about as much as the loopback call itself."""
    session = requests.Session()
    settings = session.merge_environment_settings(url, {}, None, None, None)
    session.auth = requests.utils.get_netrc_auth(url)
    session.trust_env = False
    session.proxies = settings["proxies"]
    session.verify = settings["verify"]
    session.headers.update({"Content-Type": "application/json", "Accept": "application/json"})
    return session


def _read_until(raw: urllib3.HTTPResponse, deadline: float) -> bytes:
    chunks, size = [], 0
    while True:
        try:
            chunk = raw.read1(_CHUNK, decode_content=True)
        except urllib3.exceptions.ReadTimeoutError:
            raise _TooSlow from None
        except urllib3.exceptions.HTTPError as error:
            raise requests.ConnectionError(error) from None
        if time.monotonic() > deadline:
            raise _TooSlow
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise _TooLarge
        chunks.append(chunk)


def _judge_body(raw: bytes, text: str, started: float) -> BotReply:
    """A well-formed answer is a JSON object whose "action" is a JSON object."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        return _fault(Fault.MALFORMED, text, started, f"the answer is not JSON: {error}")
    if not isinstance(data, dict) or not isinstance(data.get("action"), dict):
        return _fault(Fault.MALFORMED, text, started,
                      'the answer must be a JSON object with an "action" object')
    return BotReply(action=data["action"], fault=None, raw=text[:RAW_LIMIT],
                    elapsed_ms=elapsed_ms(started), detail="")


def _fault(code: str, text: str, started: float, detail: str) -> BotReply:
    return BotReply(action=None, fault=code, raw=text[:RAW_LIMIT],
                    elapsed_ms=elapsed_ms(started), detail=detail)


def elapsed_ms(started: float) -> float:
    """Milliseconds since `started` (a `time.monotonic()` reading), to the microsecond."""
    return round((time.monotonic() - started) * 1000, 3)


def _short(error: Exception) -> str:
    """The exception's class and first line, without a long urllib3 chain."""
    message = str(error).split("\n")[0]
    return f"{type(error).__name__}: {message[:300]}"
