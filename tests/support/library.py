"""A whole library for backup tests: some of it made by the product's jobs (cards, a TIL with its files,
quizzes answered), the bulk inserted in one transaction; its fingerprint, to tell two libraries apart (a
restored backup: every stored table, search and vector indexes' own pages too); and its content table by
table, for "as before" (an undone import: indexes read through themselves, whose pages keep what a delete
leaves)."""

from __future__ import annotations

import hashlib
import json
import os
import random
from datetime import timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from san_desktop.ai.local import LocalProvider
from san_desktop.app import SanApp
from san_desktop.core.ids import new_id
from san_desktop.core.paths import database_path
from san_desktop.core.settings import DATABASE_URL_ENV
from san_desktop.core.text import content_hash
from san_desktop.core.timeutil import utcnow
from san_desktop.db.backends.postgres.server import make_server_engine
from san_desktop.db.backends.sqlite.driver import choose_driver
from san_desktop.db.backends.sqlite.engine import make_engine
from san_desktop.db.backends.sqlite.jobs import db_time
from san_desktop.db.database import Database
from san_desktop.db.vectors import stored_rows
from san_desktop.services.quizzes import new_schedule
from tests.support.til import finished_til, quizzes_of_today

SENTENCE = "The write-ahead log keeps new pages apart until a checkpoint copies them into the database file. "
KOREAN = "트랜잭션 격리 수준은 동시에 실행되는 트랜잭션이 서로의 변경을 얼마나 볼 수 있는지 정한다. "
QUIZ_TEXTS = (
    "Raft elects a leader with randomised election timeouts; the leader replicates its log to followers.",
    "A B-tree keeps its keys sorted in pages so that a lookup reads only a few pages from disk.",
)


def made_by_jobs(app: SanApp) -> str:
    """Cards, a finished TIL (its texts are artifact files) and answered quizzes, all made by the product's
    processors with the embedded provider; the day."""
    day = finished_til(app)
    quizzes_of_today(app, QUIZ_TEXTS)
    for quiz in app.quizzes.due(limit=2):
        app.answer_quiz(quiz.id, 3, 1500)
    return day


def bulk_library(app: SanApp, scraps: int, *, seed: int = 28) -> None:
    """``scraps`` scraps with a card each (1% deleted) and its vector from the embedded provider, a tag on
    every tenth card, an OX quiz on every fifth with a review of half of those, and 50 starred repositories,
    in one transaction; then the cards' vector index (sqlite-vec tables) is built, as the app builds it."""
    rng = random.Random(seed)
    now = utcnow()
    provider = LocalProvider()
    scrap_rows, card_rows, quiz_rows, review_rows, repository_rows = [], [], [], [], []
    tag_rows = [(new_id(), f"topic-{n}", f"topic-{n}", db_time(now)) for n in range(10)]
    card_tag_rows = []
    for n in range(scraps):
        scrap_id, card_id = new_id(), new_id()
        text = (KOREAN if n % 4 == 3 else SENTENCE) * (1 + n % 3) + f"(note {n})"
        created = db_time(now - timedelta(days=rng.uniform(0, 400)))
        scrap_rows.append((scrap_id, "TEXT", text, content_hash(text), created, created if n % 100 == 99 else None))
        card_rows.append((card_id, scrap_id, f"Note {n}: {text[:50]}", text[:400], provider.embedding_model, created))
        if n % 10 == 0:
            card_tag_rows.append((card_id, tag_rows[n // 10 % len(tag_rows)][0]))
        if n % 5 == 0:
            quiz_id = new_id()
            fsrs_card, due = new_schedule(now - timedelta(days=rng.uniform(0, 30)))
            quiz_rows.append(
                (quiz_id, card_id, "OX", text[:160], "O", "[]", f"From note {n}", "NEW", fsrs_card, db_time(due),
                 created, created)
            )  # fmt: skip
            if n % 10 == 0:
                review_rows.append((new_id(), quiz_id, 1 + n % 4, db_time(now), 2000, "NEW", db_time(due)))
    for n in range(50):
        name = f"owner{n}/tool-{n}"
        repository_rows.append(
            (new_id(), name, f"A tool about {SENTENCE[:40]} {n}", "Python", json.dumps(["sqlite"]), n * 7,
             f"https://github.com/{name}", db_time(now - timedelta(days=n)), db_time(now), db_time(now), db_time(now))
        )  # fmt: skip
    vectors = provider.embed([row[3] for row in card_rows])
    model = provider.embedding_model
    embedded = db_time(now)
    embedding_rows = [
        (card_id, model, vectors.shape[1], blob, embedded)
        for card_id, blob in stored_rows([row[0] for row in card_rows], vectors)
    ]
    with app.db.write_cursor() as cursor:
        cursor.executemany(
            "INSERT INTO scraps (id, source_type, content, content_hash, created_at, deleted_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            scrap_rows,
        )
        cursor.executemany(
            "INSERT INTO knowledge_cards (id, scrap_id, title, summary, embedding_model, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(*row, row[-1]) for row in card_rows],
        )
        cursor.executemany(
            "INSERT INTO card_embeddings (card_id, model_id, dim, vector, created_at) VALUES (?, ?, ?, ?, ?)",
            embedding_rows,
        )
        cursor.executemany("INSERT INTO tags (id, name, name_key, created_at) VALUES (?, ?, ?, ?)", tag_rows)
        cursor.executemany("INSERT INTO card_tags (card_id, tag_id) VALUES (?, ?)", card_tag_rows)
        cursor.executemany(
            "INSERT INTO recall_quizzes (id, card_id, quiz_type, question, answer, accepted, explanation, state, "
            "fsrs_card, due_at, suspended, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
            quiz_rows,
        )
        cursor.executemany(
            "INSERT INTO recall_quiz_reviews (id, quiz_id, rating, reviewed_at, duration_ms, state_before, due_after) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            review_rows,
        )
        cursor.executemany(
            "INSERT INTO starred_repositories (id, full_name, description, language, topics, stars, html_url, "
            "starred_at, pushed_at, archived, fork, gone, not_interested, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, ?, ?)",
            repository_rows,
        )
    app.cards.warm_up(model)


def _digest(rows: list[tuple[Any, ...]]) -> str:
    hasher = hashlib.sha256()
    for row in rows:
        hasher.update(repr(row).encode())
    return hasher.hexdigest()


def table_fingerprints(database: Path) -> dict[str, tuple[int, str]]:
    """Each stored table's rows (search and vector indexes' shadow tables too): how many, and a hash over
    them in primary key order (all columns when there is none)."""
    conn = choose_driver().module.connect(f"{database.as_uri()}?mode=ro", uri=True)
    try:
        tables = [
            name
            for name, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
            if not name.startswith("sqlite_") and not sql.upper().startswith("CREATE VIRTUAL")
        ]
        prints = {}
        for table in tables:
            columns = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
            keys = [column[1] for column in sorted(columns, key=lambda column: column[5]) if column[5]]
            order = ", ".join(f'"{key}"' for key in keys) or ", ".join(f'"{column[1]}"' for column in columns)
            rows = [tuple(row) for row in conn.execute(f'SELECT * FROM "{table}" ORDER BY {order}')]
            prints[table] = (len(rows), _digest(rows))
        return prints
    finally:
        conn.close()


def file_fingerprints(folder: Path) -> dict[str, str]:
    """Every file under ``folder``: its path relative to it and the sha256 of its bytes."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


# what a process writes about itself, not the library: a window's notices, its session, the migrations
BOOKKEEPING = frozenset({"change_notices", "app_sessions", "alembic_version"})


def library_tables(conn: sa.Connection) -> list[str]:
    """Every table of the library's content: virtual tables (search indexes, vector indexes) are read through
    themselves, not through the shadow tables they keep their pages in."""
    rows = conn.exec_driver_sql(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
    ).all()
    virtual = [name for name, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL")]
    return [
        name
        for name, _sql in rows
        if name not in BOOKKEEPING and not any(name.startswith(f"{parent}_") for parent in virtual)
    ]


def snapshot(db: Database, *, leave_out: frozenset[str] = frozenset()) -> dict[str, list[tuple[Any, ...]]]:
    """Each table's rows, sorted."""
    with db.engine.connect() as conn:
        return {
            table: sorted((tuple(row) for row in conn.exec_driver_sql(f'SELECT * FROM "{table}"')), key=repr)
            for table in library_tables(conn)
            if table not in leave_out
        }


def every_row(data_dir: Path) -> dict[str, list[str]]:
    """Every table of the library a data folder opens (its SQLite file, or $SAN_DATABASE_URL's server database),
    the bookkeeping ones too (notices, sessions, the schema's revision), each table's rows as sorted text; a
    SQLite virtual table (search, vectors) is read through itself, not through its shadow tables."""
    url = os.environ.get(DATABASE_URL_ENV)
    engine = make_server_engine(url) if url else make_engine(database_path(data_dir), choose_driver())
    try:
        with engine.connect() as conn:
            if url:
                names = sorted(sa.inspect(conn).get_table_names())
            else:
                rows = conn.exec_driver_sql(
                    "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                ).all()
                virtual = [name for name, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL")]
                names = sorted(
                    name for name, _sql in rows if not any(name.startswith(f"{parent}_") for parent in virtual)
                )
            return {
                name: sorted(repr(tuple(row)) for row in conn.exec_driver_sql(f'SELECT * FROM "{name}"'))
                for name in names
            }
    finally:
        engine.dispose()


def every_file(folder: Path) -> dict[str, tuple[int, str]]:
    """Every file under ``folder`` (recursively): its size and the sha256 of its bytes, by relative path."""
    return {
        path.relative_to(folder).as_posix(): (path.stat().st_size, hashlib.sha256(path.read_bytes()).hexdigest())
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }
