"""``san export anki`` and ``san export markdown``: a one-line summary (or JSON), and errors as sentences."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from san_desktop.app import SanApp
from san_desktop.cli.main import main
from tests.support.anki_reader import empty_collection
from tests.support.quiz_texts import QUIZ_TEXTS
from tests.support.til import finished_til, quizzes_of_today

TEXTS = QUIZ_TEXTS[5:8]  # Korean: three cards, six quizzes


def test_anki_exports_the_quizzes_and_says_how_many(
    app: SanApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quizzes_of_today(app, TEXTS)
    target = tmp_path / "san.apkg"
    assert main(["export", "anki", str(target)]) == 0
    decks = len({card.category for card in app.cards.list_cards()})
    plural = "deck" if decks == 1 else "decks"
    assert capsys.readouterr().out == f"Exported 6 quizzes in {decks} {plural} to {target}\n"
    with empty_collection(tmp_path / "anki") as anki:
        assert anki.import_package(target).new == 6


def test_anki_with_cards_as_json(app: SanApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    quizzes_of_today(app, TEXTS)
    target = tmp_path / "san.apkg"
    assert main(["export", "anki", str(target), "--cards", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["path"], data["quizzes"], data["cards"]) == (str(target), 6, 3)
    assert all(deck.startswith("SAN::") for deck in data["decks"])


def test_anki_with_nothing_to_export_fails_and_writes_nothing(
    app: SanApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "san.apkg"
    assert main(["export", "anki", str(target), "--cards"]) == 1
    assert capsys.readouterr().err == "san: Nothing to export: the library has no quizzes or cards yet.\n"
    assert not target.exists()


def test_anki_into_a_missing_folder_says_so(app: SanApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    quizzes_of_today(app, TEXTS[:1])
    assert main(["export", "anki", str(tmp_path / "nowhere" / "san.apkg")]) == 1
    assert "there is no folder" in capsys.readouterr().err


def test_markdown_exports_and_counts_what_it_wrote(
    app: SanApp, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    finished_til(app, TEXTS)
    vault = tmp_path / "vault"
    assert main(["export", "markdown", str(vault)]) == 0
    assert capsys.readouterr().out == (
        f"Exported 3 cards and 1 TIL note to {vault} (4 written, 0 unchanged, 0 removed)\n"
    )
    assert main(["export", "markdown", str(vault), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["cards"], data["tils"], data["written"], data["unchanged"]) == (3, 1, 0, 4)
    assert len(list((vault / "Cards").glob("*.md"))) == 3


def test_export_needs_a_format(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["export"])
    assert exited.value.code == 2
    assert "FORMAT" in capsys.readouterr().err
