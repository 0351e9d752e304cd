"""Primary keys: UUIDv7 (time-ordered), made in the app, stored as canonical 36-character text."""

from __future__ import annotations

import uuid

# uuid_utils' own UUID rather than its ``compat`` one (a stdlib uuid.UUID): the same generator, but its text
# is made in Rust rather than by the stdlib's much slower __str__ (every job claim makes two ids)
from uuid_utils import uuid7


def new_id() -> str:
    """A fresh UUIDv7 as text; ids made later in one process sort after earlier ones."""
    return str(uuid7())


def is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except (ValueError, TypeError, AttributeError):
        return False
    return True
