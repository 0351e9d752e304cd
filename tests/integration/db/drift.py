"""Drift checks between the models (the code) and a migrated database (seed 002's lesson).

Kept apart from the tests so the negative tests can prove that each check catches what it guards.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from san_desktop.db.backends import make_include_name

IncludeName = Callable[[str | None, str, Mapping[str, str | None]], bool]


def schema_differences(
    conn: sa.Connection, metadata: sa.MetaData, include_name: IncludeName | None = None
) -> list[Any]:
    """What Alembic's autogenerate would change to make the database match the models."""
    opts: dict[str, Any] = {"compare_type": True, "render_as_batch": True}
    opts["include_name"] = include_name if include_name is not None else make_include_name(conn)
    context = MigrationContext.configure(conn, opts=opts)
    return list(compare_metadata(context, metadata))


def enum_columns(metadata: sa.MetaData) -> dict[tuple[str, str], set[str]]:
    """Every enum column of the models and the values the code allows in it."""
    found: dict[tuple[str, str], set[str]] = {}
    for table in metadata.tables.values():
        for column in table.columns:
            if isinstance(column.type, sa.Enum):
                found[(table.name, column.name)] = set(column.type.enums)
    return found


_IN_LIST = r"\b{column}\s+IN\s*\(([^)]*)\)"


# PostgreSQL keeps ``column IN ('A', 'B')`` as ``((column)::text = ANY ((ARRAY['A'::character varying, ...``
_PG_ANY = r"\(\(?{column}\)?::text\s*=\s*ANY\s*\(\(?ARRAY\[([^\]]*)\]"


def check_constraint_values(conn: sa.Connection, table: str, column: str) -> set[str] | None:
    """The values the CHECK constraint of ``table.column`` allows, read from the database's own DDL."""
    if conn.dialect.name == "postgresql":
        definitions = conn.execute(
            sa.text(
                "SELECT pg_get_constraintdef(c.oid) FROM pg_constraint AS c JOIN pg_class AS t ON t.oid = c.conrelid "
                "WHERE c.contype = 'c' AND t.relname = :table"
            ),
            {"table": table},
        ).scalars()
        pattern = _PG_ANY.format(column=re.escape(column))
        found = [match.group(1) for text in definitions if (match := re.search(pattern, text))]
    else:
        sql = conn.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).scalar_one_or_none()
        match = re.search(_IN_LIST.format(column=re.escape(column)), sql or "", re.IGNORECASE)
        found = [match.group(1)] if match else []
    if not found:
        return None
    return {value for listed in found for value in re.findall(r"'((?:[^']|'')*)'", listed)}


def enum_constraint_mismatches(conn: sa.Connection, expected: Mapping[tuple[str, str], set[str]]) -> list[str]:
    problems = []
    for (table, column), values in sorted(expected.items()):
        allowed = check_constraint_values(conn, table, column)
        if allowed is None:
            problems.append(f"{table}.{column}: no CHECK constraint listing its values")
            continue
        if missing := values - allowed:
            problems.append(f"{table}.{column}: values missing from the CHECK constraint: {sorted(missing)}")
        if extra := allowed - values:
            problems.append(f"{table}.{column}: CHECK allows values the code does not know: {sorted(extra)}")
    return problems
