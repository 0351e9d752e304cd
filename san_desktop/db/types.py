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
    """Takes and returns aware datetimes in UTC. SQLite has no time zones: stored there as naive UTC text.
    PostgreSQL: ``timestamp with time zone`` (revision 0019), so that the database's own ``now()`` compares
    with it whatever the session's time zone."""

    impl = sa.DateTime
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> sa.types.TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(sa.DateTime(timezone=True))
        return dialect.type_descriptor(sa.DateTime())

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column; use core.timeutil.utcnow()")
        if dialect.name == "postgresql":
            return value.astimezone(UTC)
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
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
