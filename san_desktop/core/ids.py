"""Primary keys: UUIDv7 (time-ordered), made in the app, stored as canonical 36-character text."""

from __future__ import annotations

import uuid

from uuid_utils.compat import uuid7


def new_id() -> str:
    """A fresh UUIDv7 as text; ids made later in one process sort after earlier ones."""
    return str(uuid7())


def is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except (ValueError, TypeError, AttributeError):
        return False
    return True
