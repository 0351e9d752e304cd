"""``san scrap delete`` (one or several), ``san trash list|restore|empty``: what was deleted is listed,
restored whole, and deleted for good only when the person says yes (or ``--yes``)."""

from __future__ import annotations

import io
import json

import pytest

from san_desktop.app import SanApp
from san_desktop.cli.main import main


def test_deleted_scraps_are_listed_in_the_trash_and_restored_as_they_were_deleted(
    app: SanApp, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [app.capture_text(text).value.scrap_id for text in ("Raft elects a leader.", "B-trees keep keys sorted.")]
    single = app.capture_text("WAL lets readers go on.").value.scrap_id
    assert main(["scrap", "delete", *ids]) == 0
    said = capsys.readouterr().out
    assert said.startswith("2 scraps moved to the Trash; undo with: san trash restore ")
    entry_id = said.rsplit(" ", 1)[1].strip()
    assert main(["scrap", "delete", single]) == 0
    assert capsys.readouterr().out == f"Scrap {single} moved to the Trash; undo with: san scrap restore {single}\n"

    assert main(["trash", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(entry["id"], entry["kind"], entry["scraps"]) for entry in listed] == [
        (single, "SCRAP", 1),
        (entry_id, "SCRAPS", 2),
    ]
    assert listed[1]["label"] == "Raft elects a leader."
    assert main(["trash", "list"]) == 0
    table = capsys.readouterr().out
    assert "2 scraps: Raft elects a leader., …" in table
    assert table.splitlines()[0].split() == ["ID", "DELETED", "SCRAPS", "CARDS", "QUIZZES", "KEPT", "UNTIL", "WHAT"]

    assert main(["trash", "restore", entry_id]) == 0
    assert capsys.readouterr().out == "Restored 2 scraps.\n"
    assert sorted(s.id for s in app.scraps.list_scraps()) == sorted(ids)
    assert main(["trash", "restore", entry_id]) == 5
    assert "There is nothing in the Trash with id" in capsys.readouterr().err


def test_emptying_the_trash_asks_first_and_says_how_much_goes(
    app: SanApp, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    scrap_id = app.capture_text("Raft elects a leader.").value.scrap_id
    app.delete_scrap(scrap_id)
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    assert main(["trash", "empty"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("Delete the 1 item (1 scrap with their cards and quizzes) in the Trash for good? ")
    assert "Nothing was deleted (answer y, or add --yes)." in out
    assert len(app.trash.entries()) == 1

    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # no answer (a script without --yes) is no
    assert main(["trash", "empty"]) == 1
    assert len(app.trash.entries()) == 1

    assert main(["trash", "empty", "--dry-run", "--yes"]) == 0
    assert capsys.readouterr().out.endswith("Would delete 1 item (1 scrap with their cards and quizzes) for good.\n")
    assert len(app.trash.entries()) == 1

    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert main(["trash", "empty"]) == 0
    assert capsys.readouterr().out.endswith("Deleted 1 item (1 scrap with their cards and quizzes) for good.\n")
    assert app.trash.entries() == []

    app.delete_scrap(app.capture_text("B-trees keep keys sorted.").value.scrap_id)
    assert main(["trash", "empty", "--yes"]) == 0
    assert capsys.readouterr().out == "Deleted 1 item (1 scrap with their cards and quizzes) for good.\n"
    assert main(["trash", "empty"]) == 0
    assert capsys.readouterr().out == "The Trash is empty.\n"
    assert main(["trash", "list"]) == 0
    assert capsys.readouterr().out == "The Trash is empty.\n"
