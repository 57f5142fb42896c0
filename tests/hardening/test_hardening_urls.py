"""Bot URLs (issue 14, items 1, 9 and 10): `POST /bots` validates a URL with urllib3's
parser, the one the bot client connects with, and refuses anything ambiguous with a 400
that says why (a backslash, credentials, control characters, whitespace, percent-encoded
or non-ASCII hosts, IPv6 zone ids, IPv4 written other than a.b.c.d, odd ports, parsers
that disagree); a well-formed URL whose host is off the allowlist is a 403. Malformed
URLs are never a 500, and a stored URL never shows its credentials.

Traffic stays on loopback: the allowlist admits 127.0.0.1 and the forbidden listener is on
127.0.0.2; URLs naming any other address are only ever refused, never connected to.
"""

from __future__ import annotations

import itertools
import socket
import threading
from collections.abc import Iterator

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.config import Config
from referee.match.urls import (
    BOT_URL_PATTERN,
    address_allowed,
    parse_allowlist,
    url_syntax_problem,
)
from referee.redis_server import free_port
from tests.support.apitest import ADMIN
from tests.support.live_server import LiveServer, wait_status
from tournament.store import Store

ADMIN_HEADERS = {"Authorization": f"Bearer {ADMIN}"}


class Listener:
    """A TCP listener that only counts the connections it accepts."""

    def __init__(self, host: str):
        self.sock = socket.create_server((host, 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.sock.settimeout(0.1)
        self.running = True
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            conn.close()

    def stop(self) -> None:
        self.running = False
        self.thread.join(timeout=5)
        self.sock.close()


@pytest.fixture(scope="module")
def one_host_server(redis_server, tmp_path_factory) -> Iterator[LiveServer]:
    """`referee serve` whose allowlist is the single address 127.0.0.1."""
    server = LiveServer(redis_server, tmp_path_factory.mktemp("urls") / "serve.log",
                              REFEREE_BOT_HOSTS="127.0.0.1")
    yield server
    server.stop()


def register(base: str, url: str) -> requests.Response:
    return requests.post(f"{base}/bots", headers=ADMIN_HEADERS, timeout=10,
                         json={"name": "x", "url": url, "games": ["aladino"]})


def test_a_backslash_cannot_smuggle_another_host_past_the_allowlist(one_host_server):
    """urllib.parse reads the host after the `\\@`, urllib3 (which connects) the one before
    it: `http://127.0.0.2:P\\@127.0.0.1:P/good` used to be registered (201) and played on
    127.0.0.2. Refused with a 400 saying why; the forbidden listener sees no connection."""
    forbidden = Listener("127.0.0.2")
    allowed_port = free_port()
    try:
        base = one_host_server.url
        for url in (f"http://127.0.0.2:{forbidden.port}\\@127.0.0.1:{allowed_port}/good",
                    "http://169.254.169.254\\@127.0.0.1/x"):
            answer = register(base, url)
            assert answer.status_code == 400, answer.text
            assert answer.headers["Content-Type"] == "application/problem+json"
            assert "backslash" in answer.json()["detail"]
        off_list = register(base, f"http://127.0.0.2:{forbidden.port}/good")
        assert off_list.status_code == 403 and "allowlist" in off_list.json()["detail"]
        assert register(base, f"http://127.0.0.1:{allowed_port}/good").status_code == 201
        assert "127.0.0.2" not in str(requests.get(f"{base}/bots", timeout=10).json())
    finally:
        forbidden.stop()
    assert forbidden.accepted == 0


ODD_URLS = [
    ("http://user:pass@127.0.0.1:9/bot", "credentials"),
    ("http://@127.0.0.1/", "credentials"),
    ("http://127.0.0.1:9@127.0.0.1:9/", "credentials"),
    ("http://127.0.0.1/bot\\x", "backslash"),
    ("http://127.0.0.1:9/\x00", "control"),
    ("http://127.0.0.1:9/\x7f", "control"),
    ("http://127.0.0.1 /", "whitespace"),
    ("http://127.0.0.1:9/a b", "whitespace"),
    ("http://127.0.0.1\t:9/", "whitespace"),
    ("http://%31%32%37.0.0.1/", "percent-encoded"),
    ("http://127.0.0.%31/", "percent-encoded"),
    ("http://lоcalhost/", "ASCII"),  # a Cyrillic о
    ("http://ｌocalhost/", "ASCII"),  # a fullwidth ｌ, which NFKC maps to l
    ("http://[fe80::1%25lo]/", "zone id"),
    ("http://[::1%lo]/", "zone id"),
    ("http://127.1/", "dotted-quad"),
    ("http://0x7f.0.0.1/", "dotted-quad"),
    ("http://0x7f000001/", "dotted-quad"),
    ("http://2130706433/", "dotted-quad"),
    ("http://0177.0.0.1/", "dotted-quad"),
    ("http://127.000.000.001/", "dotted-quad"),
    ("http://127.0.0.1.2/", "dotted-quad"),
    ("http://127.0.0.0x1/", "dotted-quad"),
    ("http://0/", "dotted-quad"),
    ("http://127.0.0.1:/", "port"),
    ("http://127.0.0.1:0/", "port"),
    ("http://127.0.0.1:080/", "port"),
    ("http://127.0.0.1:65536/", "port"),
    ("http://127.0.0.1:99999999999999999999/", "port"),
    ("http://127.0.0.1:+80/", "port"),
    ("http://127.0.0.1:0x50/", "port"),
    ("http://127.0.0.1:80:80/", "port"),
    ("http://[::1]:/", "port"),
    ("http://[127.0.0.1]/", "IPv6"),
    ("http://[::ffff:127.0.0.1]/", "IPv6"),
    ("http://[::1]]/", "host[:port]"),
    ("http://[::1/", "host[:port]"),
    ("http://[::1", "host[:port]"),
    ("http://[]/", "IPv6"),
    ("http://[:::1]/", "IPv6"),
    ("http://localhost./", "host name"),
    ("http://.localhost/", "host name"),
    ("http://local..host/", "host name"),
    ("http://-localhost/", "host name"),
    ("http://local_host/", "host name"),
    ("http:///bot", "needs a host"),
    ("http://", "needs a host"),
    ("http:127.0.0.1/", "http://"),
    ("http:/127.0.0.1/", "http://"),
    ("http:\\\\127.0.0.1/", "http://"),
    ("HTTP://127.0.0.1/", "http://"),
    ("//127.0.0.1/", "http://"),
    ("file:///etc/passwd", "http://"),
    ("gopher://127.0.0.1/", "http://"),
    ("0", "http://"),
]


@pytest.mark.parametrize("url, why", ODD_URLS)
def test_odd_bot_urls_are_a_400_that_says_why(api, url, why):
    answer = api.post("/bots", token=ADMIN, json={"name": "x", "url": url,
                                                  "games": ["aladino"]})
    assert answer.status_code == 400, answer.get_json()
    assert why in answer.get_json()["errors"]["url"][0]


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/bot", "https://127.0.0.1/",
                                 "http://[::1]:9/", "http://localhost:9/a@b?c=%20#d",
                                 "http://LocalHost/"])
def test_plain_loopback_bot_urls_are_accepted(api, url):
    assert api.post("/bots", token=ADMIN, json={"name": "x", "url": url,
                                                "games": ["aladino"]}).status_code == 201


@pytest.mark.parametrize("url", ["http://[127.0.0.1]/", "http://[::1", "http://[::1]x/",
                                 "http://[127.0.0.1/", "http://127.0.0.1]/", "http://[[::1]]/",
                                 "http://[::1]:99999/", "http://:80/", "http://[v1.x]/",
                                 "http://a:b:c@d/", "http://[" + ":" * 600 + "]/",
                                 "http://" + "a." * 1100 + "b/"], ids=lambda url: url[:30])
def test_malformed_bot_urls_are_a_400_never_a_500(api, url):
    answer = api.post("/bots", token=ADMIN, json={"name": "x", "url": url,
                                                  "games": ["aladino"]})
    assert answer.status_code == 400, answer.get_json()
    assert list(answer.get_json()["errors"]) == ["url"]


URL_CHARS = st.sampled_from(list("htps:/[]@\\%.:0179afx-?#:: \t\x00é") + ["127.0.0.1", "::1"])


BOT_NAMES = itertools.count()  # names are unique, and the examples share one Redis


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(st.text(max_size=60),
                 st.lists(URL_CHARS, max_size=30).map("".join),
                 st.lists(URL_CHARS, max_size=20).map(lambda parts: "http://" + "".join(parts))))
def test_any_text_as_a_bot_url_is_answered_within_the_spec(api, url):
    """Fuzzing `url`: a 201 (then the URL is unambiguous), a 400 or a 403, never a 500;
    every answer is validated against openapi.yaml by the test client."""
    answer = api.post("/bots", token=ADMIN, json={"name": f"x-{next(BOT_NAMES)}", "url": url,
                                                  "games": ["aladino"]})
    assert answer.status_code in (201, 400, 403)
    assert (answer.status_code == 400) == (url_syntax_problem(url) is not None)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.from_regex(BOT_URL_PATTERN))
def test_every_url_of_the_spec_pattern_is_well_formed(url):
    """The pattern in openapi.yaml promises no more than the server accepts."""
    assert url_syntax_problem(url) is None


def test_a_name_entry_admits_the_name_only_and_addresses_need_an_address_entry():
    """`localhost` admits the name in URLs; whatever it resolves to at connect time must
    fall inside an address or network entry (`address_allowed`, which the bot client
    calls with the address it connected to)."""
    allowlist = parse_allowlist("localhost,127.0.0.0/8,::1")
    assert address_allowed("127.0.0.1", allowlist) and address_allowed("127.9.9.9", allowlist)
    assert address_allowed("::1", allowlist) and address_allowed("::ffff:127.0.0.1", allowlist)
    for address in ("10.0.0.1", "169.254.169.254", "::ffff:10.0.0.1", "fe80::1%lo", "::2",
                    "localhost", "127.1", "", "not an address"):
        assert not address_allowed(address, allowlist), address
    names_only = parse_allowlist("localhost")
    assert not address_allowed("127.0.0.1", names_only), "a name entry admits no address"
    assert not address_allowed("127.0.0.2", parse_allowlist("127.0.0.1"))


@pytest.mark.parametrize("entry", ["127.1", "local_host", "10.0.0.0/33", "http://x", "a b"])
def test_an_allowlist_entry_that_is_neither_name_nor_address_is_refused_at_start(entry):
    with pytest.raises(ValueError, match="REFEREE_BOT_HOSTS"):
        Config.from_env({"REFEREE_BOT_HOSTS": f"localhost,{entry}"})


def test_a_stored_url_never_shows_its_credentials(api, redis_url):
    """A bot registered with credentials before they were refused: the admin's reads show
    its URL (and its versions' URLs) without them; anonymous reads show no URL at all."""
    store = Store.from_url(redis_url)
    store.save_bot({"id": "bot-old", "name": "old", "games": ["aladino"],
                    "url": "http://alice:s3cret@127.0.0.1:9/bot?x=1",
                    "created_at": "2024-01-01T00:00:00Z"})
    refused = api.post("/bots", token=ADMIN, json={
        "name": "new", "url": "http://alice:s3cret@127.0.0.1:9/bot", "games": ["aladino"]})
    assert refused.status_code == 400 and "credentials" in refused.get_json()["detail"]
    for token in (None, ADMIN):
        one = api.get("/bots/bot-old", token=token).get_json()
        listed = api.get("/bots", token=token).get_json()
        versions = api.get("/bots/bot-old/versions", token=token).get_json()
        assert one.get("url") == (None if token is None else "http://127.0.0.1:9/bot?x=1")
        for text in (str(one), str(listed), str(versions)):
            assert "s3cret" not in text and "alice" not in text


def test_a_name_that_resolves_off_the_allowlist_is_refused_at_connect_time(api, redis_url,
                                                                           workers):
    """`localhost` is on the allowlist as a name, but the only address entry is ::1: the
    bot listens on 127.0.0.1, which `localhost` resolves to as well. The worker resolves
    the name, checks each address it would connect to, and never reaches 127.0.0.1: the
    seat crashes, saying why."""
    listener = Listener("127.0.0.1")
    try:
        bot = api.register_bot(f"http://localhost:{listener.port}/", name="rebound")
        match = api.create_match("aladino", [{"kind": "bot", "bot_id": bot}] * 2, seed=1)
        workers.start(1, REFEREE_BOT_HOSTS="localhost,::1")
        finished = wait_status(api, match["id"], "finished")
    finally:
        listener.stop()
    assert listener.accepted == 0
    record = api.get(f"/matches/{match['id']}/replay").get_json()
    fault = record["steps"][-1]["fault"]
    assert finished["forfeit"]["fault"] == "crash"
    assert "127.0.0.1" in fault["detail"] and "allowlist" in fault["detail"]
