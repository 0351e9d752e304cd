"""A made-up public internet for the address policy's tests: one public name whose public address leads
to a server on 127.0.0.1. Everything else is the system's own network."""

from __future__ import annotations

from san_desktop.web.addresses import Network

PUBLIC_NAME = "public.example"
PUBLIC_ADDRESS = "93.184.215.14"  # a public address (example.com's, once)


class FakeInternet(Network):
    """``PUBLIC_NAME`` resolves to ``PUBLIC_ADDRESS``, which is public (so the policy sees a public site, as
    it would on the real internet) and routes to 127.0.0.1 (where the test's server listens)."""

    def resolve(self, host: str, port: int) -> list[str]:
        return [PUBLIC_ADDRESS] if host == PUBLIC_NAME else super().resolve(host, port)

    def route(self, address: str) -> str:
        return "127.0.0.1" if address == PUBLIC_ADDRESS else address
