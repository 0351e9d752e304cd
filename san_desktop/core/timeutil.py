from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """Timezone-aware current UTC time; every stored timestamp is UTC."""
    return datetime.now(UTC)
