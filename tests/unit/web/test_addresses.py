"""Which addresses are local (issue 23), in every form the issue's hostile run tried, and the policy one
download follows: the scrapped address decides whether local addresses may be dialled."""

from __future__ import annotations

import pytest

from san_desktop.web.addresses import AddressGuard, Network, local_kind
from san_desktop.web.errors import AddressRefusedError


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("10.0.0.1", "private"),
        ("10.255.255.254", "private"),
        ("169.254.169.254", "link-local"),  # a cloud machine's metadata service
        ("::1", "loopback"),
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("192.168.0.1", "private"),
        ("192.168.255.255", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.254", "private"),
        ("100.64.0.1", "shared (carrier-grade NAT)"),
        ("100.127.255.254", "shared (carrier-grade NAT)"),
        ("fd00::1", "unique-local"),
        ("fd12:3456:789a::1", "unique-local"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),  # with its scope, as the resolver gives it
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
        ("::ffff:10.1.2.3", "private"),
        ("64:ff9b::7f00:1", "loopback"),  # NAT64 of 127.0.0.1
        ("2002:7f00:1::1", "loopback"),  # 6to4 of 127.0.0.1
        ("224.0.0.251", "multicast"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("198.18.0.1", "private"),  # benchmarking networks are no one's public site either
    ],
)
def test_local_addresses_are_named_for_what_they_are(address: str, kind: str) -> None:
    assert local_kind(address) == kind


@pytest.mark.parametrize(
    "address",
    [
        "93.184.215.14",
        "8.8.8.8",
        "172.32.0.1",
        "100.128.0.1",
        "11.0.0.1",
        "2606:4700::1111",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
    ],
)
def test_public_addresses_are_public(address: str) -> None:
    assert local_kind(address) is None


@pytest.mark.parametrize(
    ("host", "kind"),
    [
        ("localhost", "loopback"),
        ("2130706433", "loopback"),  # 127.0.0.1 as one decimal number
        ("0x7f000001", "loopback"),
        ("0177.0.0.1", "loopback"),  # octal
        ("127.1", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("::1", "loopback"),
        ("167772161", "private"),  # 10.0.0.1
    ],
)
def test_every_form_of_a_host_is_checked_as_what_it_resolves_to(host: str, kind: str) -> None:
    resolved = Network().resolve(host, 80)
    assert resolved
    assert {local_kind(address) for address in resolved} == {kind}


class _Names(Network):
    """A resolver with made-up names (the DNS of the test); every other host as the system resolves it."""

    def __init__(self, names: dict[str, list[str]]) -> None:
        self.names = names

    def resolve(self, host: str, port: int) -> list[str]:
        return self.names.get(host) or super().resolve(host, port)


NAMES = _Names(
    {
        "blog.example": ["93.184.215.14"],
        "cdn.example": ["2606:4700::1111", "93.184.215.15"],
        "wiki.corp": ["10.1.2.3"],
        "sso.corp": ["10.1.2.4", "fd00::4"],
        "mixed.example": ["10.9.9.9", "93.184.215.16"],
        "sneaky.example": ["169.254.169.254"],
    }
)


def test_a_public_first_address_lets_only_public_addresses_through() -> None:
    guard = AddressGuard(NAMES)
    assert guard.addresses("blog.example", 443) == ["93.184.215.14"]
    assert guard.addresses("cdn.example", 443) == ["2606:4700::1111", "93.184.215.15"]
    with pytest.raises(AddressRefusedError, match=r"\(wiki\.corp is 10\.1\.2\.3, private\)"):
        guard.addresses("wiki.corp", 80)
    with pytest.raises(AddressRefusedError, match=r"\(sneaky\.example is 169\.254\.169\.254, link-local\)"):
        guard.addresses("sneaky.example", 80)
    with pytest.raises(AddressRefusedError, match=r"\(127\.0\.0\.1, loopback\); SAN Desktop follows redirects only"):
        guard.addresses("127.0.0.1", 80)  # (an address as it is: no name to show)
    assert guard.addresses("mixed.example", 80) == ["93.184.215.16"]  # its local address is never dialled


def test_a_local_first_address_was_meant_and_so_are_its_local_redirects() -> None:
    guard = AddressGuard(NAMES)
    assert guard.addresses("wiki.corp", 80) == ["10.1.2.3"]
    assert guard.addresses("sso.corp", 443) == ["10.1.2.4", "fd00::4"]
    assert guard.addresses("blog.example", 443) == ["93.184.215.14"]  # and public ones, of course


def test_a_first_address_only_partly_local_counts_as_public() -> None:
    guard = AddressGuard(NAMES)
    assert guard.addresses("mixed.example", 80) == ["93.184.215.16"]
    with pytest.raises(AddressRefusedError):
        guard.addresses("wiki.corp", 80)
