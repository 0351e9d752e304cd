"""Alembic environment: SQLite in batch mode, the tables each database derives (its word and vector indexes)
invisible to autogenerate."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context

from san_desktop.db.backends import make_include_name
from san_desktop.db.models import Base

config = context.config


def run_migrations(connection: sa.Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=True,
        compare_type=True,
        include_name=make_include_name(connection),
    )
    with context.begin_transaction():
        context.run_migrations()


def run_from_command_line() -> None:
    """``alembic`` invoked by a developer: use the database of $SAN_DATA_DIR (or the default one)."""
    from san_desktop.core.paths import database_path, ensure_data_dir, resolve_data_dir
    from san_desktop.db.backends.sqlite.engine import choose_driver, make_engine

    path = database_path(ensure_data_dir(resolve_data_dir()))
    engine = make_engine(path, choose_driver())
    try:
        with engine.connect() as connection:
            run_migrations(connection)
            connection.commit()
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit("Offline (--sql) migrations are not supported; run against a database file.")

provided = config.attributes.get("connection")
if provided is not None:
    run_migrations(provided)
else:
    run_from_command_line()
