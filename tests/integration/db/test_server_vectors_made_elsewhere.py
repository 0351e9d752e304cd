"""A space's pgvector table made by another machine while this one waited for the lock on its name is found,
not made again (the second machine's card analysis failed with ``DuplicateTable`` and its card was lost from
the day's TIL)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import sqlalchemy as sa

from san_desktop.db.backends.postgres import vectors as server_vectors
from san_desktop.db.database import Database

WAIT_SECONDS = 30  # a bound, not a pace
MODEL = "made-elsewhere"
DIM = 8


def _waits_for_the_lock(db: Database, table: str) -> bool:
    with db.engine.connect() as conn:
        return bool(
            conn.execute(
                sa.text(
                    "SELECT EXISTS (SELECT 1 FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid "
                    "WHERE l.locktype = 'advisory' AND NOT l.granted AND a.query LIKE '%pg_advisory_xact_lock%')"
                )
            ).scalar_one()
        )


@pytest.mark.postgresql
def test_a_table_made_by_another_machine_while_this_one_waited_is_found(
    machines: tuple[Database, Database],
) -> None:
    laptop, desktop = machines
    table = server_vectors.table_of(MODEL, DIM)
    failures: list[BaseException] = []
    made: list[str] = []

    def ensure_on_laptop() -> None:
        try:
            with laptop.engine.connect() as conn:
                made.append(server_vectors.ensure(conn, MODEL, DIM))
        except BaseException as exc:
            failures.append(exc)

    with desktop.engine.connect() as other:  # another machine, making the same table at the same moment
        other.execute(sa.text("SELECT pg_advisory_lock(hashtextextended(:table, 0))"), {"table": table})
        other.commit()
        worker = threading.Thread(target=ensure_on_laptop)
        worker.start()
        # (the laptop's wait is seen in the server's lock table, looked at again until it is there)
        waited = time.monotonic() + WAIT_SECONDS
        while not _waits_for_the_lock(laptop, table):
            assert worker.is_alive(), failures
            assert time.monotonic() < waited, "the laptop never waited for the lock"
        other.execute(sa.text(f"CREATE TABLE {table} (card_id varchar(36) PRIMARY KEY, embedding vector({DIM}))"))
        other.commit()
        other.execute(sa.text("SELECT pg_advisory_unlock(hashtextextended(:table, 0))"), {"table": table})
        other.commit()
    worker.join(WAIT_SECONDS)
    assert failures == []
    assert made == [table]
    with laptop.engine.begin() as conn:
        server_vectors.put(conn, "card-1", MODEL, np.ones(DIM, dtype=np.float32))
