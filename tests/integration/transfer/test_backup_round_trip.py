"""`san export all` then `san import` into an empty folder: the same library, row for row and file for file,
shown the same by the app; nothing of the data folder that is not the library, and no secret, in the zip."""

from __future__ import annotations

import json
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from san_desktop.app import SanApp, open_app
from san_desktop.artifacts.store import ARTIFACT_DIR
from san_desktop.cli.main import main
from san_desktop.core.paths import database_path
from san_desktop.core.settings import load_settings
from san_desktop.db.migrate import head_revision
from tests.support.library import bulk_library, file_fingerprints, made_by_jobs, table_fingerprints

SCRAPS = 2_000


def _export(data_dir: Path, zip_path: Path) -> dict[str, object]:
    assert main(["--data-dir", str(data_dir), "export", "all", str(zip_path)]) == 0
    with zipfile.ZipFile(zip_path) as archive:
        return dict(json.loads(archive.read("manifest.json")))


def _shown(app: SanApp, day: str) -> dict[str, object]:
    """What the library shows: its scrap list, its cards, the day's TIL, the quizzes due and the stars."""
    now = app.clock()
    return {
        "scraps": [(item.id, item.content) for item in app.scraps.list_scraps(limit=5_000)],
        "cards": [(card.id, card.title) for card in app.cards.list_cards(limit=5_000)],
        "til": app.til.get(day).markdown,
        "due": app.quizzes.due_counts(now),
        "first_due": [quiz.id for quiz in app.quizzes.due(limit=100, now=now)],
        "stars": app.stars.status().repositories,
    }


def test_a_restored_library_is_the_library_that_was_backed_up(
    app: SanApp, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    day = made_by_jobs(app)
    bulk_library(app, SCRAPS)
    stray = data_dir / ARTIFACT_DIR / "til" / "left-over-by-a-crash.md"  # referenced by no row
    stray.write_text("an orphan the sweep will remove", encoding="utf-8")
    referenced = file_fingerprints(data_dir / ARTIFACT_DIR)
    del referenced["til/left-over-by-a-crash.md"]
    assert any(key.endswith(".md") for key in referenced)  # the TIL's texts are files
    zip_path, target = tmp_path / "backup.zip", tmp_path / "restored"

    started = time.perf_counter()
    manifest = _export(data_dir, zip_path)  # while the app is open (it holds the data folder's lock)
    exported = time.perf_counter() - started
    started = time.perf_counter()
    assert main(["--data-dir", str(target), "import", str(zip_path)]) == 0
    restored = time.perf_counter() - started

    assert manifest["format"] == "san-desktop-backup"
    assert manifest["version"] == 1
    assert manifest["schema_revision"] == head_revision()
    assert manifest["files"] == len(referenced)
    counts = manifest["counts"]
    assert isinstance(counts, dict)
    assert counts["scraps"] >= SCRAPS
    assert counts["recall_quiz_reviews"] > 200
    source_tables = table_fingerprints(database_path(data_dir))
    assert table_fingerprints(database_path(target)) == source_tables
    assert {table: rows for table, (rows, _digest) in source_tables.items() if table in counts} == counts
    assert file_fingerprints(target / ARTIFACT_DIR) == referenced
    assert load_settings(target) == load_settings(data_dir)
    with capsys.disabled():
        size = zip_path.stat().st_size
        print(f"\nbackup of {SCRAPS:,} scraps: export {exported:.2f} s, restore {restored:.2f} s, zip {size:,} bytes")

    expected = _shown(app, day)
    with open_app(target, kind="cli", log_to_stderr=False) as copy:
        assert _shown(copy, day) == expected
        assert expected["til"]
        listed = expected["scraps"]
        assert isinstance(listed, list)
        assert len(listed) > SCRAPS - 100  # (deleted scraps are not listed)


def test_the_zip_holds_the_library_and_nothing_else(app: SanApp, data_dir: Path, tmp_path: Path) -> None:
    made_by_jobs(app)
    (data_dir / ARTIFACT_DIR / "til" / ".half-written.md.tmp").write_text("temporary", encoding="utf-8")
    (data_dir / "logs" / "extra.log").write_text("a log line", encoding="utf-8")
    token, password, key = "ghp_" + "S3cr3tT0ken" * 3, "hunter2-passw0rd", "sk-" + "k3y" * 10
    app.connections.set_github_token(token)
    app.connections.set_ai_key(key)
    app.save_settings(replace(app.settings, github=replace(app.settings.github, repository="me/til")))
    settings = json.loads((data_dir / "settings.json").read_text(encoding="utf-8"))
    settings["ai"]["base_url"] = f"http://learner:{password}@127.0.0.1:9/v1"  # typed by hand into the file
    (data_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    zip_path = tmp_path / "backup.zip"

    _export(data_dir, zip_path)

    with zipfile.ZipFile(zip_path) as archive:
        names = archive.namelist()
        contents = b"".join(archive.read(name) for name in names)
        restored_settings = json.loads(archive.read("settings.json"))
    assert names[:2] == ["manifest.json", "san.db"]
    assert "settings.json" in names
    assert all(name in ("manifest.json", "san.db", "settings.json") or name.startswith("artifacts/") for name in names)
    assert not any(name.endswith(".tmp") or "log" in name.split("/")[0] for name in names)
    assert restored_settings["github"]["repository"] == "me/til"
    for secret in (token, password, key):
        assert secret.encode() not in contents
        assert secret.encode() not in zip_path.read_bytes()
