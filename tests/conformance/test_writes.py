"""What each backend does for the services' writes: an upsert adds rows and updates those whose key is taken; a
backend that defers foreign keys lets a transaction write a row before the row it refers to, and one that cannot
says so; two transactions serialised on one key run one after the other."""

from __future__ import annotations

import threading

import sqlalchemy as sa

from san_desktop.core.enums import SourceType
from san_desktop.core.errors import SanError
from san_desktop.core.ids import new_id
from san_desktop.core.text import content_hash
from san_desktop.db.database import Database
from san_desktop.db.models import LibrarySetting
from san_desktop.db.tables import knowledge_cards, scraps

WAIT_SECONDS = 30  # a bound, not a pace


def test_an_upsert_adds_new_rows_and_updates_those_whose_key_is_taken(library: Database) -> None:
    table = LibrarySetting.__table__
    assert isinstance(table, sa.Table)
    now = library.backend.clock()
    with library.write() as session:
        library.backend.upsert(session, table, [{"name": "a", "value": "1", "updated_at": now}])
    with library.write() as session:
        library.backend.upsert(
            session,
            table,
            [{"name": "a", "value": "2", "updated_at": now}, {"name": "b", "value": "3", "updated_at": now}],
        )
    with library.sessions() as session:
        rows = session.execute(sa.select(table.c.name, table.c.value).order_by(table.c.name)).all()
    assert [tuple(row) for row in rows] == [("a", "2"), ("b", "3")]


def test_foreign_keys_are_deferred_where_the_backend_can_and_checked_at_once_where_it_cannot(
    library: Database,
) -> None:
    now = library.backend.clock()
    scrap_row = {"id": new_id(), "source_type": SourceType.TEXT, "content": "t", "content_hash": content_hash("t"),
                 "created_at": now}  # fmt: skip
    card_row = {"id": new_id(), "scrap_id": scrap_row["id"], "title": "A card", "summary": "Before its scrap.",
                "created_at": now, "updated_at": now}  # fmt: skip
    said: list[bool] = []

    def card_before_its_scrap() -> None:
        with library.write_connection() as conn:
            said.append(library.backend.defer_foreign_keys(conn))
            conn.execute(sa.insert(knowledge_cards), [card_row])
            conn.execute(sa.insert(scraps), [scrap_row])

    try:
        card_before_its_scrap()
    except (SanError, sa.exc.DBAPIError):
        assert said == [False]  # a backend that cannot defer says so
        written = 0
    else:
        assert said == [True]
        written = 1
    with library.sessions() as session:
        assert session.scalar(sa.select(sa.func.count()).select_from(knowledge_cards)) == written


def test_transactions_serialised_on_one_key_run_one_after_the_other(library: Database) -> None:
    inside = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def first() -> None:
        with library.write() as session:
            library.backend.serialize(session, "til:2026-12-07")
            order.append("first in")
            inside.set()
            release.wait(WAIT_SECONDS)
            order.append("first out")

    def second() -> None:
        assert inside.wait(WAIT_SECONDS)
        with library.write() as session:
            library.backend.serialize(session, "til:2026-12-07")
            order.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    assert inside.wait(WAIT_SECONDS)
    release.set()
    for thread in threads:
        thread.join(WAIT_SECONDS)
    assert order == ["first in", "first out", "second in"]


def test_writers_of_one_process_wait_for_each_other_only_where_the_database_has_one_writer(
    library: Database,
) -> None:
    """A file has one writer at a time; a server orders its writers itself (row locks, claims that skip what is
    locked), so a second writer of the same process writes while a first one's transaction is still open."""
    first_open = threading.Event()
    release = threading.Event()
    second_done = threading.Event()

    def first() -> None:
        with library.write() as session:
            library.backend.upsert(
                session, _settings_table(), [{"name": "first", "value": "1", "updated_at": library.backend.clock()}]
            )
            first_open.set()
            release.wait(WAIT_SECONDS)

    def second() -> None:
        with library.write_cursor() as cursor:
            cursor.execute("SELECT 1")
        second_done.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    threads[0].start()
    assert first_open.wait(WAIT_SECONDS)
    threads[1].start()
    try:
        if library.shares_library:
            assert second_done.wait(WAIT_SECONDS)  # while the first is still open
            assert not release.is_set()
        else:
            assert not second_done.wait(0.2)  # (a bound on waiting for what must not happen)
    finally:
        release.set()
        for thread in threads:
            thread.join(WAIT_SECONDS)
    assert second_done.is_set()


def _settings_table() -> sa.Table:
    table = LibrarySetting.__table__
    assert isinstance(table, sa.Table)
    return table
