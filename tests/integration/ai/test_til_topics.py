"""The embedded provider's TIL groups the day's cards by meaning with the sentence encoder: a category whose
cards are on different topics is split, an English and a Korean card on one topic share a section."""

from __future__ import annotations

from san_desktop.ai.base import TilCard
from san_desktop.ai.local import LocalProvider

CARDS = (
    TilCard("wal", "SQLite WAL mode", "Readers continue while one writer appends to the write-ahead log; a "
            "checkpoint copies pages back.", ("SQLite", "WAL"), "Databases", None),
    TilCard("checkpoint", "SQLite 체크포인트", "체크포인트는 WAL 파일의 페이지를 데이터베이스 파일로 옮긴다. 읽기가 "
            "오래 걸리면 체크포인트가 멈춘다.", ("SQLite", "체크포인트"), "Databases", None),
    TilCard("vacuum", "PostgreSQL VACUUM", "VACUUM removes dead tuples left by MVCC updates and deletes; "
            "autovacuum runs it in the background.", ("PostgreSQL", "MVCC"), "Databases", None),
    TilCard("effect", "React useEffect", "useEffect runs after render; return a cleanup function to unsubscribe "
            "before the next effect.", ("React", "hooks"), "Frontend", None),
    TilCard("memo", "React useMemo", "useMemo caches a computed value between renders until its dependencies "
            "change.", ("React", "useMemo"), "Frontend", None),
)  # fmt: skip


def test_the_til_sections_follow_meaning_across_languages_and_within_a_category() -> None:
    draft = LocalProvider(time_limit_seconds=None).write_til("2026-12-02", CARDS)
    headings = [line[3:] for line in draft.markdown.splitlines() if line.startswith("## ")]
    assert headings == ["Databases: SQLite", "Frontend", "Databases: PostgreSQL VACUUM"]
    sqlite = draft.markdown.split("## Databases: SQLite\n", 1)[1].split("\n## ", 1)[0]
    assert "### SQLite WAL mode" in sqlite
    assert "### SQLite 체크포인트" in sqlite
    assert draft.title == "Databases: SQLite, Frontend, Databases: PostgreSQL VACUUM"
