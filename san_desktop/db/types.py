"""Column types shared by the models."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

# Enum columns are VARCHAR of this fixed length, so adding a value changes only the CHECK constraint.
ENUM_LENGTH = 40


class UTCDateTime(sa.TypeDecorator[datetime]):
    """Takes and returns aware datetimes in UTC. A ``timestamp with time zone`` where the database has one
    (PostgreSQL, revision 0019: the database's own ``now()`` compares with it whatever the session's time
    zone); SQLite's DATETIME keeps no zone: naive UTC text there."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, _driver: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column; use core.timeutil.utcnow()")
        return value.astimezone(UTC)  # (SQLite's DATETIME writes the fields and leaves the zone)

    def process_result_value(self, value: Any, _driver: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        if value.tzinfo is not None:
            return value.astimezone(UTC)
        return value.replace(tzinfo=UTC)


def enum_column_type(enum_cls: type[StrEnum], name: str) -> sa.Enum:
    """A string column with a CHECK constraint named ``ck_<table>_<name>`` listing the enum's values."""
    return sa.Enum(
        enum_cls,
        name=name,
        native_enum=False,
        create_constraint=True,
        length=ENUM_LENGTH,
        values_callable=lambda members: [member.value for member in members],
        validate_strings=True,
    )
