from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from san_desktop.core.errors import DatabaseDamagedError, DatabaseTooNewError, NotADatabaseError
from san_desktop.core.text import content_hash
from san_desktop.db.backends.sqlite.engine import choose_driver
from san_desktop.db.backends.sqlite.migrate import migrate, read_revision
from san_desktop.db.migrate import head_revision
from san_desktop.db.vectors import from_stored, to_blob
from tests.support.db import migrate_to, raw_connection


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tables(path: Path) -> set[str]:
    with raw_connection(path) as conn:
        return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_new_database_is_created_at_head_without_backup(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    result = migrate(path, choose_driver())
    assert result.previous is None
    assert result.head == head_revision()
    assert result.backup is None
    assert read_revision(path, choose_driver()) == head_revision()
    assert {"scraps", "knowledge_cards", "async_jobs", "job_attempts", "app_sessions"} <= _tables(path)
    assert list(tmp_path.glob("*.backup-*")) == []


def test_upgrade_from_an_earlier_revision_backs_up_first_and_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    migrate_to(path, "0001")
    with raw_connection(path) as conn:
        conn.execute(
            "INSERT INTO scraps (id, source_type, content, content_hash, created_at) "
            "VALUES ('s1', 'TEXT', 'keep me', 'h1', '2026-01-01 00:00:00')"
        )
    assert "async_jobs" not in _tables(path)

    result = migrate(path, choose_driver())

    assert (result.previous, result.head) == ("0001", head_revision())
    assert result.backup is not None
    assert result.backup.exists()
    assert result.backup.parent == path.parent
    assert "0001" in result.backup.name
    # the backup is the database as it was before the upgrade
    assert read_revision(result.backup, choose_driver()) == "0001"
    assert "async_jobs" not in _tables(result.backup)
    with raw_connection(result.backup) as conn:
        assert conn.execute("SELECT content FROM scraps").fetchall() == [("keep me",)]
    # and the upgraded database still holds the data
    assert "async_jobs" in _tables(path)
    with raw_connection(path) as conn:
        assert conn.execute("SELECT content FROM scraps").fetchall() == [("keep me",)]


def test_database_at_head_is_neither_touched_nor_backed_up(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    migrate(path, choose_driver())
    result = migrate(path, choose_driver())
    assert result.previous == result.head
    assert not result.upgraded
    assert result.backup is None


def test_newer_database_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    migrate(path, choose_driver())
    with raw_connection(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    before = _digest(path)

    with pytest.raises(DatabaseTooNewError) as refused:
        migrate(path, choose_driver())

    message = str(refused.value)
    assert str(path) in message
    assert "9999_from_the_future" in message
    assert head_revision() in message
    assert _digest(path) == before
    assert list(tmp_path.glob("*.backup-*")) == []


def test_random_bytes_are_reported_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    path.write_bytes(os.urandom(64 * 1024))
    before = _digest(path)

    with pytest.raises(NotADatabaseError, match="not a SAN Desktop database") as refused:
        migrate(path, choose_driver())

    assert str(path) in str(refused.value)
    assert _digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["san.db"]


def test_corrupt_file_with_a_sqlite_header_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))
    before = _digest(path)
    with pytest.raises(DatabaseDamagedError, match="is damaged"):
        migrate(path, choose_driver())
    assert _digest(path) == before


def test_someone_elses_sqlite_database_is_not_adopted(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    with raw_connection(path) as conn:
        conn.execute("CREATE TABLE recipes (name TEXT)")
    before = _digest(path)
    with pytest.raises(NotADatabaseError, match="no SAN Desktop schema revision"):
        migrate(path, choose_driver())
    assert _digest(path) == before


def test_the_revision_chain_read_without_alembic_is_alembics() -> None:
    from san_desktop.db.migrate import _revision_chain, script_directory

    walked = [revision.revision for revision in script_directory().walk_revisions()]  # newest first
    assert list(_revision_chain()) == list(reversed(walked))
    assert head_revision() == script_directory().get_current_head()


def test_revision_0008_compacts_vectors_and_card_tags_and_keeps_search_in_step(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    migrate_to(path, "0007")
    vectors = np.random.default_rng(3).standard_normal((5, 512)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with raw_connection(path) as conn:
        conn.execute(
            "INSERT INTO scraps (id, source_type, content, content_hash, created_at) "
            "VALUES ('s1', 'TEXT', 'text', 'h1', '2026-01-01 00:00:00')"
        )
        conn.execute(
            "INSERT INTO knowledge_cards (id, scrap_id, title, summary, created_at, updated_at) "
            "VALUES ('c1', 's1', 't', 's', '2026-01-01 00:00:00', '2026-01-01 00:00:00')"
        )
        conn.execute("INSERT INTO tags (id, name, name_key, created_at) VALUES ('t1', 'WAL', 'wal', '2026-01-01')")
        conn.execute(
            "INSERT INTO tags (id, name, name_key, created_at) VALUES ('t2', 'Vacuum', 'vacuum', '2026-01-01')"
        )
        conn.execute("INSERT INTO card_tags (card_id, tag_id) VALUES ('c1', 't1')")
        conn.execute("PRAGMA foreign_keys=OFF")  # vectors of cards that need not exist for this check
        conn.executemany(
            "INSERT INTO card_embeddings (card_id, model_id, dim, vector, created_at) VALUES (?, 'm', 512, ?, ?)",
            [(f"c{n}", to_blob(vector), "2026-01-01 00:00:00") for n, vector in enumerate(vectors)],
        )

    migrate(path, choose_driver())

    with raw_connection(path) as conn:
        rows = conn.execute("SELECT card_id, dim, vector FROM card_embeddings ORDER BY card_id").fetchall()
        indexes = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert [len(row[2]) for row in rows] == [512 + 4] * 5
    for (_card_id, dim, blob), vector in zip(rows, vectors, strict=True):
        assert float(from_stored(blob, dim) @ vector) > 0.999
    assert "ix_job_attempts_session_id" not in indexes
    with raw_connection(path) as conn:  # card tags rebuilt without a rowid, the search index still follows them
        assert conn.execute("SELECT card_id, tag_id FROM card_tags").fetchall() == [("c1", "t1")]
        conn.execute("INSERT INTO card_tags (card_id, tag_id) VALUES ('c1', 't2')")
        assert conn.execute("SELECT rtrim(tags) FROM card_search").fetchall() == [("WAL Vacuum",)]
        conn.execute("DELETE FROM card_tags WHERE tag_id = 't1'")
        assert conn.execute("SELECT rtrim(tags) FROM card_search").fetchall() == [("Vacuum",)]


def test_revision_0011_widens_the_job_types_and_keeps_jobs_attempts_and_their_link(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    migrate_to(path, "0010")
    with raw_connection(path) as conn:
        conn.execute(
            "INSERT INTO app_sessions (id, pid, hostname, kind, app_version, started_at) "
            "VALUES ('a1', 1, 'h', 'gui', '0', '2026-01-01 00:00:00')"
        )
        conn.execute(
            "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, owner_session, "
            "created_at, updated_at) VALUES ('j1', 'CARD_ANALYSIS', 's1', 'PENDING', 1, 3, 'a1', "
            "'2026-01-01 00:00:00', '2026-01-01 00:00:00')"
        )
        conn.execute(
            "INSERT INTO job_attempts (id, job_id, attempt, run_id, session_id, pool, started_at) "
            "VALUES ('t1', 'j1', 1, 'r1', 'a1', 'AI', '2026-01-01 00:00:00')"
        )
        with pytest.raises(Exception, match="CHECK constraint failed"):
            conn.execute(
                "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, created_at, "
                "updated_at) VALUES ('j2', 'GITHUB_STAR_SYNC', 'x', 'PENDING', 0, 3, '2026', '2026')"
            )

    migrate(path, choose_driver())

    with raw_connection(path) as conn:
        conn.execute("PRAGMA foreign_keys=ON")
        assert conn.execute("SELECT id, owner_session FROM async_jobs").fetchall() == [("j1", "a1")]
        assert conn.execute("SELECT id, job_id FROM job_attempts").fetchall() == [("t1", "j1")]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        attempts = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'job_attempts'").fetchone()[0]
        assert "REFERENCES async_jobs (id)" in attempts
        assert "_old" not in " ".join(row[0] for row in conn.execute("SELECT name FROM sqlite_master"))
        conn.execute(
            "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, created_at, "
            "updated_at) VALUES ('j2', 'GITHUB_STAR_SYNC', 'x', 'PENDING', 0, 3, '2026', '2026')"
        )
        conn.execute("DELETE FROM async_jobs WHERE id = 'j1'")  # the link still cascades
        assert conn.execute("SELECT count(*) FROM job_attempts").fetchone() == (0,)


def test_revision_0012_adds_page_fetch_jobs_and_the_page_title_keeping_scraps_and_jobs(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    migrate_to(path, "0011")
    with raw_connection(path) as conn:
        conn.execute(
            "INSERT INTO scraps (id, source_type, source_ref, content, content_hash, created_at) VALUES "
            "('s1', 'URL', 'https://example.com/a', 'https://example.com/a', 'h', '2026-01-01 00:00:00')"
        )
        conn.execute(
            "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, created_at, "
            "updated_at) VALUES ('j1', 'CARD_ANALYSIS', 's1', 'FAILED', 3, 3, '2026', '2026')"
        )
        with pytest.raises(Exception, match="CHECK constraint failed"):
            conn.execute(
                "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, created_at, "
                "updated_at) VALUES ('j2', 'PAGE_FETCH', 's1', 'PENDING', 0, 3, '2026', '2026')"
            )

    migrate(path, choose_driver())

    with raw_connection(path) as conn:
        assert conn.execute("SELECT id, title FROM scraps").fetchall() == [("s1", None)]
        assert conn.execute("SELECT id, job_type FROM async_jobs").fetchall() == [("j1", "CARD_ANALYSIS")]
        conn.execute(
            "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, created_at, "
            "updated_at) VALUES ('j2', 'PAGE_FETCH', 's1', 'PENDING', 0, 3, '2026', '2026')"
        )
        conn.execute("UPDATE scraps SET title = 'A page' WHERE id = 's1'")


def test_revision_0013_marks_no_field_of_existing_cards_as_edited_and_keeps_cards_tags_and_search(
    tmp_path: Path,
) -> None:
    path = tmp_path / "san.db"
    migrate_to(path, "0012")
    with raw_connection(path) as conn:
        conn.execute(
            "INSERT INTO scraps (id, source_type, content, content_hash, created_at) "
            "VALUES ('s1', 'TEXT', 'text', 'h1', '2026-01-01 00:00:00')"
        )
        conn.execute(
            "INSERT INTO knowledge_cards (id, scrap_id, title, summary, created_at, updated_at) "
            "VALUES ('c1', 's1', 'Docker layer cache', 'Layers are reused.', '2026-01-01 00:00:00', "
            "'2026-01-01 00:00:00')"
        )
        conn.execute("INSERT INTO tags (id, name, name_key, created_at) VALUES ('t1', 'Docker', 'docker', '2026')")
        conn.execute("INSERT INTO card_tags (card_id, tag_id) VALUES ('c1', 't1')")

    migrate(path, choose_driver())

    with raw_connection(path) as conn:
        conn.execute("PRAGMA foreign_keys=ON")
        assert conn.execute(
            "SELECT id, title, title_edited, summary_edited, tags_edited, category_edited FROM knowledge_cards"
        ).fetchall() == [("c1", "Docker layer cache", 0, 0, 0, 0)]
        assert conn.execute("SELECT card_id, tag_id FROM card_tags").fetchall() == [("c1", "t1")]
        # the search index's triggers on knowledge_cards survived: an edit is found at once
        conn.execute("UPDATE knowledge_cards SET title = 'Build cache', title_edited = 1 WHERE id = 'c1'")
        assert conn.execute("SELECT rtrim(title) FROM card_search WHERE card_search MATCH 'build'").fetchall() == [
            ("Build cache",)
        ]
        # a card inserted without the new columns (an older writer) is not edited
        conn.execute(
            "INSERT INTO scraps (id, source_type, content, content_hash, created_at) "
            "VALUES ('s2', 'TEXT', 'more', 'h2', '2026-01-01 00:00:00')"
        )
        conn.execute(
            "INSERT INTO knowledge_cards (id, scrap_id, title, summary, created_at, updated_at) "
            "VALUES ('c2', 's2', 't', 's', '2026-01-01 00:00:00', '2026-01-01 00:00:00')"
        )
        assert conn.execute("SELECT title_edited FROM knowledge_cards WHERE id = 'c2'").fetchone() == (0,)


def test_revision_0014_indexes_the_text_of_existing_scraps_and_follows_every_change(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    migrate_to(path, "0013")
    with raw_connection(path) as conn:
        conn.execute(
            "INSERT INTO scraps (id, source_type, content, content_hash, created_at) "
            "VALUES ('s1', 'TEXT', '트랜잭션 격리는 갱신 손실을 막는다', 'h1', '2026-01-01 00:00:00')"
        )

    migrate(path, choose_driver())

    def found(word: str) -> list[str]:
        return [
            row[0]
            for row in conn.execute(
                "SELECT s.id FROM scrap_search JOIN scraps AS s ON s.rowid = scrap_search.rowid "
                "WHERE scrap_search MATCH ?",
                (f'"{word}"*',),
            )
        ]

    with raw_connection(path) as conn:
        assert found("격리") == ["s1"]  # an existing scrap, its word with its particle
        conn.execute(
            "INSERT INTO scraps (id, source_type, content, content_hash, created_at) "
            "VALUES ('s2', 'TEXT', 'zymurgy notes', 'h2', '2026-01-01 00:00:00')"
        )
        assert found("zymurgy") == ["s2"]
        conn.execute("UPDATE scraps SET content = 'brewing notes' WHERE id = 's2'")
        assert found("zymurgy") == []
        assert found("brewing") == ["s2"]
        conn.execute("DELETE FROM scraps WHERE id = 's1'")
        assert found("격리") == []
        conn.execute("INSERT INTO scrap_search (scrap_search) VALUES ('integrity-check')")  # raises if they differ


def test_revision_0015_adds_til_indexing_jobs_and_drops_a_days_index_with_the_day(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    migrate_to(path, "0014")
    with raw_connection(path) as conn:
        conn.execute(
            "INSERT INTO daily_summaries (id, local_date, status, current_version, created_at, updated_at) "
            "VALUES ('d1', '2026-01-01', 'COMPLETED', 1, '2026-01-01 00:00:00', '2026-01-01 00:00:00')"
        )
        conn.execute(
            "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, created_at, "
            "updated_at) VALUES ('j1', 'TIL_GENERATION', 'd1', 'COMPLETED', 1, 3, '2026', '2026')"
        )

    migrate(path, choose_driver())

    with raw_connection(path) as conn:
        assert conn.execute("SELECT id, job_type FROM async_jobs").fetchall() == [("j1", "TIL_GENERATION")]
        conn.execute(
            "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, created_at, "
            "updated_at) VALUES ('j2', 'TIL_INDEXING', 'd1', 'PENDING', 0, 3, '2026', '2026')"
        )
        conn.execute("INSERT INTO til_search (summary_id, version, title, body) VALUES ('d1', 1, 'T', 'zymurgy')")
        conn.execute(
            "INSERT INTO til_embeddings (summary_id, version, model_id, dim, vector, created_at) "
            "VALUES ('d1', 1, 'm', 2, x'00', '2026-01-01 00:00:00')"
        )
        assert conn.execute("SELECT summary_id FROM til_search WHERE til_search MATCH 'zymurgy'").fetchall() == [
            ("d1",)
        ]
    with raw_connection(path) as conn:
        conn.execute("PRAGMA foreign_keys = ON")  # (as the app's connections have it)
        conn.execute("DELETE FROM daily_summaries WHERE id = 'd1'")
        assert conn.execute("SELECT count(*) FROM til_search").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM til_embeddings").fetchone() == (0,)


def test_revision_0016_copies_the_stopped_work_of_scraps_from_their_failed_or_cancelled_jobs(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    migrate_to(path, "0015")
    with raw_connection(path) as conn:
        for scrap in ("s1", "s2"):
            conn.execute(
                "INSERT INTO scraps (id, source_type, content, content_hash, created_at) "
                f"VALUES ('{scrap}', 'TEXT', 'text {scrap}', 'h{scrap}', '2026-01-01 00:00:00')"
            )
        for job, job_type, status in (
            ("j1", "CARD_ANALYSIS", "CANCELLED"),
            ("j2", "SCRAP_REFINE", "FAILED"),
            ("j3", "CARD_ANALYSIS", "COMPLETED"),
        ):
            target = "s2" if job == "j3" else "s1"
            conn.execute(
                "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, created_at, "
                f"updated_at) VALUES ('{job}', '{job_type}', '{target}', '{status}', 1, 3, '2026', '2026')"
            )

    migrate(path, choose_driver())

    with raw_connection(path) as conn:
        rows = conn.execute(
            "SELECT id, fetch_stopped, analysis_stopped, refine_stopped FROM scraps ORDER BY id"
        ).fetchall()
        assert rows == [("s1", 0, 1, 1), ("s2", 0, 0, 0)]


def test_revision_0017_keeps_the_attempts_that_did_not_succeed_and_each_jobs_newest_run(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    migrate_to(path, "0016")
    with raw_connection(path) as conn:
        conn.execute(
            "INSERT INTO async_jobs (id, job_type, target_id, status, attempts, max_attempts, created_at, "
            "updated_at) VALUES ('j1', 'CARD_ANALYSIS', 's1', 'COMPLETED', 2, 3, '2026', '2026')"
        )
        for attempt, run, outcome in ((1, "r1", "RETRY_SCHEDULED"), (2, "r2", "SUCCEEDED")):
            conn.execute(
                "INSERT INTO job_attempts (id, job_id, attempt, run_id, session_id, pool, started_at, ended_at, "
                f"outcome) VALUES ('a{attempt}', 'j1', {attempt}, '{run}', 'sess', 'AI', "
                f"'2026-01-01 00:00:0{attempt}', '2026-01-01 00:00:0{attempt}', '{outcome}')"
            )

    migrate(path, choose_driver())

    with raw_connection(path) as conn:
        assert conn.execute("SELECT id, outcome FROM job_attempts").fetchall() == [("a1", "RETRY_SCHEDULED")]
        assert conn.execute("SELECT run_id FROM async_jobs WHERE id = 'j1'").fetchone() == ("r2",)


def test_revision_0026_makes_each_scrap_deleted_before_it_an_entry_of_the_trash(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    migrate_to(path, "0025")
    with raw_connection(path) as conn:
        conn.execute(
            "INSERT INTO scraps (id, source_type, content, title, content_hash, created_at, deleted_at) VALUES "
            "('s1', 'TEXT', 'Raft elects a leader', NULL, 'h1', '2026-01-01 00:00:00', '2026-01-02 00:00:00'), "
            "('s2', 'URL', 'https://example.com/a', 'A page', 'h2', '2026-01-01 00:00:00', '2026-01-03 00:00:00'), "
            "('s3', 'TEXT', 'kept', NULL, 'h3', '2026-01-01 00:00:00', NULL)"
        )

    migrate(path, choose_driver())

    with raw_connection(path) as conn:
        assert conn.execute("SELECT id, kind, label, deleted_at FROM trash_entries ORDER BY id").fetchall() == [
            ("s1", "SCRAP", "Raft elects a leader", "2026-01-02 00:00:00"),
            ("s2", "SCRAP", "A page", "2026-01-03 00:00:00"),
        ]
        assert conn.execute("SELECT id, trash_id FROM scraps ORDER BY id").fetchall() == [
            ("s1", "s1"),
            ("s2", "s2"),
            ("s3", None),
        ]


def test_revision_0027_strips_the_user_and_password_of_every_stored_address(tmp_path: Path) -> None:
    path = tmp_path / "san.db"
    migrate_to(path, "0026")
    hashed = {address: content_hash(address) for address in ("https://example.com/a", "https://example.com/b")}
    with raw_connection(path) as conn:
        conn.execute(
            "INSERT INTO scraps (id, source_type, source_ref, content, content_hash, created_at) VALUES "
            "('sel', 'HTML', 'https://ann:hunter2@intranet.example/page', 'a selection', 'h1', '2026-01-01'), "
            "('ftp', 'TEXT', 'ftp://ann:hunter2@files.example/x', 'a note', 'h2', '2026-01-01'), "
            "('mail', 'TEXT', 'mailto:ann@example.com', 'an address, not an authority', 'h3', '2026-01-01'), "
            "('waiting', 'URL', 'https://ann@example.com/a', 'https://ann@example.com/a', 'w', '2026-01-01'), "
            "('read', 'URL', 'https://bob@example.com/c', 'The page read.', 'r', '2026-01-01'), "
            "('twin', 'URL', 'https://ann@example.com/b', 'Its page.', 't', '2026-01-01'), "
            f"('other', 'URL', 'https://example.com/b', 'The same page.', '{hashed['https://example.com/b']}', "
            "'2026-01-01')"
        )

    migrate(path, choose_driver())

    with raw_connection(path) as conn:
        rows = dict(
            (row[0], row[1:]) for row in conn.execute("SELECT id, source_ref, content, content_hash FROM scraps")
        )
    assert rows["sel"] == ("https://intranet.example/page", "a selection", "h1")
    assert rows["ftp"] == ("ftp://files.example/x", "a note", "h2")
    assert rows["mail"] == ("mailto:ann@example.com", "an address, not an authority", "h3")
    # a link is found again by its address: its hash (and its text while its page is awaited) follow it
    assert rows["waiting"] == ("https://example.com/a", "https://example.com/a", hashed["https://example.com/a"])
    assert rows["read"] == ("https://example.com/c", "The page read.", content_hash("https://example.com/c"))
    # the same page is in the library already without the user: this one is left as it was, not made a twin
    assert rows["twin"] == ("https://ann@example.com/b", "Its page.", "t")
