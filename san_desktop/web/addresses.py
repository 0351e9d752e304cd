"""Which addresses a page download may connect to (issue 23): a redirect must not take the user to their own
machine or network unasked.

Every connection's host is resolved here and each address it resolves to is checked; only checked
addresses are dialled (so a name that resolves to one address for the check and another for the connection
gains nothing). The first connection, to the address the user scrapped, decides for the whole download:
when all of its addresses are local (loopback, private, link-local, unique-local, unspecified, ...) the user
meant their own network, and every hop may be local too (an intranet wiki redirecting to its login page);
otherwise only public addresses are dialled, on every hop. Decimal, hexadecimal or octal forms of an
address (``2130706433``, ``0x7f000001``) are what the system resolver makes of them: the check sees that.
"""

from __future__ import annotations

import ipaddress
import socket

from san_desktop.web.errors import AddressRefusedError

_IPv4 = ipaddress.IPv4Address
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # an IPv4 address inside IPv6 (RFC 6052)
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: behind the provider, not on the internet
_UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")


def local_kind(address: str) -> str | None:
    """What keeps ``address`` (an IP address as text) off the public internet — "loopback", "private",
    "link-local", ... — or None when it is a public address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # (an IPv6 scope: fe80::1%eth0)
    if isinstance(ip, ipaddress.IPv6Address) and (embedded := _embedded_ipv4(ip)) is not None:
        return local_kind(str(embedded))  # (an IPv6-only network reaches every IPv4 site through NAT64)
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if ip in _UNIQUE_LOCAL:
        return "unique-local"
    if ip in _SHARED:
        return "shared (carrier-grade NAT)"
    if ip.is_reserved:
        return "reserved"
    if ip.is_private or not ip.is_global:
        return "private"
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> _IPv4 | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, Teredo, NAT64), which decides where it leads."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return _IPv4(int(ip) & 0xFFFFFFFF)
    return None


class Network:
    """Where names and addresses lead: the system's resolver and routes. Tests give it a made-up public
    internet (tests/support/internet.py); the policy above it runs as it is."""

    def resolve(self, host: str, port: int) -> list[str]:
        """Every address ``host`` resolves to, in the resolver's order (raises ``OSError`` when none)."""
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        return list(dict.fromkeys(str(info[4][0]) for info in found))

    def route(self, address: str) -> str:
        """The address a connection to ``address`` is made to: itself."""
        return address


class AddressGuard:
    """The addresses one download may connect to, host by host (see the module's docstring)."""

    def __init__(self, network: Network) -> None:
        self.network = network
        self.local_allowed: bool | None = None  # decided by the first connection: the scrapped address's

    def addresses(self, host: str, port: int) -> list[str]:
        """The checked addresses of ``host``, to dial in this order; raises ``AddressRefusedError`` when
        none may be dialled."""
        resolved = self.network.resolve(host, port)
        if not resolved:
            raise OSError(f"{host} has no address")
        kinds = {address: local_kind(address) for address in resolved}
        if self.local_allowed is None:
            self.local_allowed = bool(kinds) and all(kind is not None for kind in kinds.values())
        if self.local_allowed:
            return resolved
        public = [address for address, kind in kinds.items() if kind is None]
        if not public:
            address, kind = next(iter(kinds.items()))
            shown = address if address == host.strip("[]") else f"{host} is {address}"
            raise AddressRefusedError(
                f"The page redirects to a local or private address ({shown}, {kind}); SAN Desktop follows "
                "redirects only to public addresses. Scrap that address itself if you mean it."
            )
        return public
