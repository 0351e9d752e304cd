"""No address is stored with its ``user:password@`` (issue 38, item 10): a selection's page, a link and a page
sent by the extension, a link given to ``san scrap add --url`` or copied to the clipboard, an address that is
not a web page's, and a highlight's source in an import."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from san_desktop.app import SanApp
from san_desktop.cli.main import main
from san_desktop.core.enums import SourceType
from san_desktop.db.database import Database
from san_desktop.db.tables import scraps
from san_desktop.transfer.readers import read_plan
from san_desktop.web.endpoint import BrowserCapture, CaptureEndpoint
from tests.support.processes import child_env

TOKEN = "test-token-0123456789"
SECRET = "hunter2-secret"
PAGE = """<!DOCTYPE html><html><head><title>Checkpoints</title></head><body><article><h1>Checkpoints</h1>
<p>A checkpoint copies the pages of the write-ahead log back into the database file.</p></article></body></html>"""


@pytest.fixture
def endpoint(app: SanApp) -> Iterator[CaptureEndpoint]:
    def capture(sent: BrowserCapture) -> tuple[str, bool]:
        result = app.capture_from_browser(sent).value
        return result.scrap_id, result.duplicate

    served = CaptureEndpoint(capture, lambda: TOKEN)
    served.start()
    yield served
    served.stop()


def _send(endpoint: CaptureEndpoint, body: dict[str, Any]) -> str:
    answer = httpx.post(
        f"http://127.0.0.1:{endpoint.port}/v2/scraps",
        json=body,
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    scrap_id: str = answer.json()["scrap_id"]
    return scrap_id


def _stored(db: Database) -> list[dict[str, Any]]:
    """Every stored row of ``scraps``, each column as text."""
    with db.sessions() as session:
        return [dict(row._mapping) for row in session.execute(sa.select(scraps)).all()]


def _nowhere(db: Database, *secrets: str) -> None:
    for row in _stored(db):
        for column, value in row.items():
            for secret in secrets:
                assert secret not in str(value), f"{column} keeps {secret!r}: {value!r}"


def test_a_selection_keeps_its_page_without_the_user_and_password(
    endpoint: CaptureEndpoint, app: SanApp, db: Database
) -> None:
    scrap_id = _send(
        endpoint,
        {
            "url": f"https://reader:{SECRET}@wiki.example/raft?x=1#part",
            "selection": "Raft elects.",
            "kind": "selection",
        },
    )
    scrap = app.scraps.get(scrap_id)
    assert (scrap.source_type, scrap.source_ref) == (SourceType.TEXT, "https://wiki.example/raft?x=1#part")
    _nowhere(db, SECRET, "reader")


def test_a_link_is_stored_without_the_user_and_password(endpoint: CaptureEndpoint, app: SanApp, db: Database) -> None:
    scrap_id = _send(endpoint, {"url": f"https://reader:{SECRET}@wiki.example/post", "kind": "link"})
    assert app.scraps.get(scrap_id).source_ref == "https://wiki.example/post"
    # the same page with another user name, or none, is the same scrap
    again = httpx.post(
        f"http://127.0.0.1:{endpoint.port}/v2/scraps",
        json={"url": "https://wiki.example/post", "kind": "link"},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert again.json() == {"scrap_id": scrap_id, "duplicate": True}
    _nowhere(db, SECRET, "reader")


def test_a_page_is_stored_without_the_user_and_password(endpoint: CaptureEndpoint, app: SanApp, db: Database) -> None:
    scrap_id = _send(endpoint, {"url": f"https://reader:{SECRET}@wiki.example/wal", "html": PAGE, "kind": "page"})
    scrap = app.scraps.get(scrap_id)
    assert scrap.source_ref == "https://wiki.example/wal"
    assert "A checkpoint copies the pages" in scrap.content
    _nowhere(db, SECRET, "reader")


def test_an_address_that_is_not_a_web_page_loses_them_too(app: SanApp, db: Database) -> None:
    result = app.capture_url(f"ftp://reader:{SECRET}@files.example/notes.txt", "Notes").value
    scrap = app.scraps.get(result.scrap_id)
    assert (scrap.source_ref, scrap.content) == (
        "ftp://files.example/notes.txt",
        "Notes\nftp://files.example/notes.txt",
    )
    _nowhere(db, SECRET, "reader")


def test_the_command_line_stores_a_link_without_them(
    db: Database, app: SanApp, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scrap", "add", "--url", f"https://reader:{SECRET}@wiki.example/cli", "--json"]) == 0
    scrap_id = json.loads(capsys.readouterr().out)["scrap_id"]
    assert app.scraps.get(scrap_id).source_ref == "https://wiki.example/cli"
    _nowhere(db, SECRET, "reader")


def test_a_link_copied_to_the_clipboard_is_stored_without_them(db: Database, app: SanApp) -> None:
    env = child_env()
    env.pop("QT_QPA_PLATFORM", None)  # the X server's clipboard, not the offscreen one of the tests
    san = shlex.join([sys.executable, "-m", "san_desktop.cli.main", "scrap", "add", "--clipboard", "--json"])
    address = f"https://reader:{SECRET}@wiki.example/copied"
    script = f"printf %s {shlex.quote(address)} | xclip -selection clipboard -i && {san}"
    done = subprocess.run(
        ["xvfb-run", "-a", "sh", "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    scrap_id = json.loads(done.stdout)["scrap_id"]
    assert app.scraps.get(scrap_id).source_ref == "https://wiki.example/copied"
    _nowhere(db, SECRET, "reader")


def test_an_imported_highlight_keeps_its_source_without_them(app: SanApp, db: Database, tmp_path: Path) -> None:
    export = tmp_path / "readwise.csv"
    export.write_text(
        "Highlight,Title,Author,URL,Note,Location,Date\n"
        f'"Readers do not block writers.",WAL,SQLite,https://reader:{SECRET}@sqlite.example/wal.html,,3,2024-03-04\n',
        encoding="utf-8",
    )
    summary = app.store_import(read_plan(export)).value
    [scrap_id] = summary.scrap_ids
    assert app.scraps.get(scrap_id).source_ref == "https://sqlite.example/wal.html"
    _nowhere(db, SECRET, "reader")
