"""A keyring backend that is there but fails every call, as a locked or crashed keyring service does."""

from __future__ import annotations

from keyring.backend import KeyringBackend
from keyring.errors import KeyringLocked

REASON = "the keyring daemon is locked"


class FailingKeyring(KeyringBackend):
    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def get_password(self, service: str, username: str) -> str | None:
        self.calls += 1
        raise KeyringLocked(REASON)

    def set_password(self, service: str, username: str, password: str) -> None:
        self.calls += 1
        raise KeyringLocked(REASON)

    def delete_password(self, service: str, username: str) -> None:
        self.calls += 1
        raise KeyringLocked(REASON)
