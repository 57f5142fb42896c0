"""The client's address behind the operator's reverse proxies (`REFEREE_TRUSTED_PROXIES`).

The API bounds some requests per client address: account signups, replay verifications,
live streams. Behind a reverse proxy every request comes from the proxy's address, so
those bounds would be shared by every client. `TrustedProxies` wraps the WSGI app: when a
request comes from an address of a trusted proxy, the client's address is read from
`X-Forwarded-For`, right to left (each proxy appends the address it got the request
from), skipping the trusted proxies' own addresses, and becomes the request's
`REMOTE_ADDR` (the access log's too). Only entries a trusted proxy wrote are believed: the
first one from the right that is not a trusted proxy is the client, and whatever a client
wrote to the left of it is ignored. An entry that is not an address stops the walk at the
last trusted hop. A request from any other address keeps its own address, whatever its
headers say.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from typing import Any

from referee.match.urls import address_allowed

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
FORWARDED_FOR = "HTTP_X_FORWARDED_FOR"


def parse_address(text: str) -> IPAddress | None:
    """An address as a proxy writes it (`1.2.3.4`, `1.2.3.4:5678`, `::1`, `[::1]:5678`),
    IPv4-mapped IPv6 as IPv4; None when it is none (`unknown`, a name, junk)."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:].split("]", 1)[0]
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if address.version == 6 and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


class TrustedProxies:
    """WSGI middleware: `REMOTE_ADDR` becomes the client's address behind trusted proxies."""

    def __init__(self, app: WsgiApp, networks: tuple[str, ...]):
        """`networks`: the trusted proxies' addresses and networks (`Config.trusted_proxies`)."""
        self.app, self.networks = app, networks

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]
                 ) -> Iterable[bytes]:
        environ["REMOTE_ADDR"] = self.client_address(environ.get("REMOTE_ADDR", ""),
                                                     environ.get(FORWARDED_FOR, ""))
        return self.app(environ, start_response)

    def trusted(self, address: IPAddress | None) -> bool:
        return address is not None and address_allowed(str(address), self.networks)

    def client_address(self, peer: str, forwarded_for: str) -> str:
        """The client's address of a request from `peer` with this `X-Forwarded-For`
        (several headers arrive joined by commas, in order)."""
        hop = parse_address(peer)
        if not self.trusted(hop):
            return peer
        for entry in reversed(forwarded_for.split(",")):
            address = parse_address(entry)
            if address is None:
                break
            hop = address
            if not self.trusted(address):
                break
        return str(hop)
