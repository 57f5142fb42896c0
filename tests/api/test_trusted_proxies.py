"""The client's address behind the operator's reverse proxies (`REFEREE_TRUSTED_PROXIES`,
`referee.api.proxies`): the bounds per client address count each client, not the proxy,
and nobody else can choose the address they are counted as."""

from __future__ import annotations

import pytest

from referee.api.proxies import TrustedProxies
from referee.config import Config, ConfigError

PROXY = "127.0.0.1"


def client_of(peer: str, forwarded_for: str, trusted: tuple[str, ...] = ("10.0.0.0/8",)) -> str:
    return TrustedProxies(lambda environ, start: [], trusted).client_address(peer, forwarded_for)


@pytest.mark.parametrize(("peer", "forwarded_for", "client"), [
    ("203.0.113.5", "198.51.100.1", "203.0.113.5"),  # not a proxy: its header means nothing
    ("10.0.0.2", "198.51.100.1", "198.51.100.1"),
    ("10.0.0.2", "", "10.0.0.2"),  # a proxy's own request
    ("10.0.0.2", "6.6.6.6, 198.51.100.1", "198.51.100.1"),  # the client wrote the first
    ("10.0.0.2", "6.6.6.6, 198.51.100.1, 10.0.0.9", "198.51.100.1"),  # two proxies
    ("10.0.0.2", "10.0.0.8, 10.0.0.9", "10.0.0.8"),  # every hop a proxy
    ("10.0.0.2", "198.51.100.1, unknown", "10.0.0.2"),  # junk stops at the last known hop
    ("10.0.0.2", "198.51.100.1:4711", "198.51.100.1"),
    ("10.0.0.2", "[2001:db8::7]:4711", "2001:db8::7"),
    ("10.0.0.2", "2001:db8::7", "2001:db8::7"),
    ("::ffff:10.0.0.2", "198.51.100.1", "198.51.100.1"),  # a dual-stack listener's peer
    ("10.0.0.2", "::ffff:198.51.100.1", "198.51.100.1"),
])
def test_the_client_is_the_rightmost_address_no_trusted_proxy_wrote(peer, forwarded_for,
                                                                     client):
    assert client_of(peer, forwarded_for) == client


def test_trusted_proxies_are_addresses_or_networks_and_nothing_else():
    config = Config.from_env({"REFEREE_TRUSTED_PROXIES": " 10.1.2.3/8, ::1 ,192.0.2.7"})
    assert config.trusted_proxies == ("10.0.0.0/8", "::1/128", "192.0.2.7/32")
    assert Config.from_env({}).trusted_proxies == ()
    with pytest.raises(ConfigError, match="REFEREE_TRUSTED_PROXIES.*'proxy.example'"):
        Config.from_env({"REFEREE_TRUSTED_PROXIES": "10.0.0.1,proxy.example"})


@pytest.fixture
def config_overrides() -> dict:
    return {"trusted_proxies": (f"{PROXY}/32",), "signup": "open", "signup_rate": (1, 60)}


def sign_up(api, name: str, forwarded_for: str, peer: str = PROXY):
    return api.post("/accounts", json={"name": name}, headers={"X-Forwarded-For": forwarded_for},
                    environ_base={"REMOTE_ADDR": peer})


def refused(response) -> bool:
    """A 429 for the address's spent allowance."""
    return (response.status_code == 429
            and response.get_json()["type"] == "/problems/account/rate-limited")


def test_sign_ups_behind_a_trusted_proxy_are_counted_per_client(api):
    """REFEREE_SIGNUP_RATE is per client address: behind a proxy, before this setting,
    every visitor shared the proxy's one allowance (here 1 a minute)."""
    assert sign_up(api, "first", "198.51.100.1").status_code == 201
    assert sign_up(api, "second", "198.51.100.2").status_code == 201
    assert refused(sign_up(api, "third", "6.6.6.6, 198.51.100.1"))


def test_a_client_that_is_no_trusted_proxy_cannot_choose_its_address(api):
    assert sign_up(api, "first", "198.51.100.1", peer="127.0.0.9").status_code == 201
    assert refused(sign_up(api, "second", "198.51.100.2", peer="127.0.0.9"))
