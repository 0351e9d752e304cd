"""A listener of a library's notifications that remembers what it was told (``Database.listen``'s callbacks)."""

from __future__ import annotations

import threading


class Told:
    """What a listener was called with, and an event set at each call."""

    def __init__(self) -> None:
        self.payloads: list[frozenset[str] | None] = []
        self.called = threading.Event()

    def __call__(self, payloads: frozenset[str] | None) -> None:
        self.payloads.append(payloads)
        self.called.set()

    def named(self) -> set[str]:
        return {name for payloads in self.payloads for name in payloads or ()}
