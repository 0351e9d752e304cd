"""`san db copy`: a SQLite library of 5,000 scraps into an empty PostgreSQL database and back into a new data
folder; every table's rows and checksums the same, the library shown the same by the app on each copy, the
SQLite file left as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from san_desktop.app import SanApp, open_app
from san_desktop.cli.main import main
from san_desktop.core.paths import database_path
from san_desktop.core.settings import DATABASE_URL_ENV
from san_desktop.transfer.db_copy import copy_to_server
from tests.support.library import bulk_library, made_by_jobs, table_fingerprints

pytestmark = [pytest.mark.sqlite, pytest.mark.slow]

SCRAPS = 5_000


TOP = 5  # the similar cards compared: the first ones, which an approximate index finds as an exact scan does


def _similar(app: SanApp, card_id: str) -> tuple[list[float], list[str]]:
    """The scores of a card's most similar cards, and which cards scored above the last of them: the bulk library
    repeats its sentences, so many cards score the same, and which of equals come first, or make the cut, is each
    index's choice (SQLite's exact scan, pgvector's HNSW); an approximate index may also pass over one of the
    many near-equals further down (it did, once in many runs)."""
    found = [(near.card.id, round(near.score, 4)) for near in app.cards.similar(card_id)][:TOP]
    cut = found[-1][1] if found else None
    return [score for _, score in found], sorted(card for card, score in found if score != cut)


def _shown(app: SanApp, day: str) -> dict[str, object]:
    """What the library shows: scraps, cards, similar cards, the day's TIL, the quizzes due and the stars."""
    now = app.clock()
    cards = app.cards.list_cards(limit=10_000)
    return {
        "scraps": [(item.id, item.content) for item in app.scraps.list_scraps(limit=10_000)],
        "cards": [(card.id, card.title) for card in cards],
        "similar": [_similar(app, card.id) for card in cards[:5]],
        "til": app.til.get(day).markdown,
        "due": app.quizzes.due_counts(now),
        "first_due": [quiz.id for quiz in app.quizzes.due(limit=100, now=now)],
        "stars": app.stars.status().repositories,
    }


def test_a_library_copied_to_a_server_and_back_is_the_same_library(
    app: SanApp,
    data_dir: Path,
    tmp_path: Path,
    postgres_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    day = made_by_jobs(app)
    bulk_library(app, SCRAPS)
    expected = _shown(app, day)
    assert expected["til"]
    source_tables = table_fingerprints(database_path(data_dir))

    assert main(["--data-dir", str(data_dir), "db", "copy", "--to", postgres_url, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rows"]["scraps"] >= SCRAPS
    assert summary["files"] >= 2  # the TIL's texts
    assert table_fingerprints(database_path(data_dir)) == source_tables  # the file only read

    laptop = tmp_path / "laptop"
    monkeypatch.setenv(DATABASE_URL_ENV, postgres_url)
    with open_app(laptop, kind="cli", log_to_stderr=False) as on_server:
        assert on_server.db.shares_library
        assert _shown(on_server, day) == expected
    monkeypatch.delenv(DATABASE_URL_ENV)

    back = tmp_path / "back"
    assert main(["db", "copy", "--from", postgres_url, "--into", str(back)]) == 0
    assert "every table's rows and checksum match" in capsys.readouterr().out
    with open_app(back, kind="cli", log_to_stderr=False) as copied_back:
        assert copied_back.db.path is not None
        assert _shown(copied_back, day) == expected


def test_a_copy_goes_into_an_empty_database_only(app: SanApp, data_dir: Path, postgres_url: str) -> None:
    app.capture_text("VACUUM reclaims the space of dead row versions.")
    first = copy_to_server(data_dir, postgres_url, progress=lambda _line: None)
    assert first.rows["scraps"] == 1
    with pytest.raises(Exception, match="already holds a library"):
        copy_to_server(data_dir, postgres_url, progress=lambda _line: None)


def test_a_password_on_the_command_line_is_refused(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data-dir", str(data_dir), "db", "copy", "--to", "postgresql://ana:pw@db.example.org/san"]) != 0
    said = capsys.readouterr().err
    assert "keep the password out of the URL" in said
    assert ":pw@" not in said
