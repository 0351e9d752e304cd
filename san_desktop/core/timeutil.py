from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo


def utcnow() -> datetime:
    """Timezone-aware current UTC time; every stored timestamp is UTC."""
    return datetime.now(UTC)


def local_zone(name: str = "") -> tzinfo:
    """The named time zone, or the system's when ``name`` is empty (its offset as of now)."""
    if name:
        return ZoneInfo(name)
    zone = datetime.now().astimezone().tzinfo
    assert zone is not None
    return zone
