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
    """Stores UTC as naive text (SQLite has no time zones) and returns aware UTC datetimes."""

    impl = sa.DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column; use core.timeutil.utcnow()")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
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
