"""The review-and-commit window: edit, Save as a new version, the diff shows it, Commit shows progress and
then the link; closing with unsaved edits asks; a draft left by a crash is offered back."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from pytestqt.qtbot import QtBot

from san_desktop.core.enums import TilVersionKind
from san_desktop.core.settings import GitHubSettings
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.til.review import TilReviewWindow
from tests.support.github_server import TOKEN, FakeGitHub, fake_github_server
from tests.support.til import finished_til


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with fake_github_server() as fake:
        yield fake


@pytest.fixture
def review(qtbot: QtBot, live_context: AppContext, github: FakeGitHub) -> TilReviewWindow:
    app = live_context.app
    app.save_settings(replace(app.settings, github=GitHubSettings(api_url=github.url, repository="me/til")))
    app.set_github_token(TOKEN)
    day = finished_til(app)
    with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000):
        live_context.start(poll_ms=100)
    window = TilReviewWindow(live_context, day)
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.editor.toPlainText().startswith("# TIL"), timeout=5_000)
    qtbot.waitUntil(lambda: window.path.text() != "", timeout=5_000)
    return window


def test_save_makes_an_edited_version_and_the_diff_shows_it(qtbot: QtBot, review: TilReviewWindow) -> None:
    review.editor.appendPlainText("\nA line I added myself.")
    qtbot.waitUntil(lambda: "A line I added myself." in review.preview.toPlainText(), timeout=5_000)
    assert review.dirty()
    with qtbot.waitSignal(review.saved, timeout=5_000) as saved:
        review.save_button.click()
    assert saved.args == [2]
    assert not review.dirty()
    view = review._app.til.get(review.local_date)
    assert [(v.version, v.kind) for v in view.versions] == [(1, TilVersionKind.GENERATED), (2, TilVersionKind.EDITED)]
    assert view.current_version == 2
    qtbot.waitUntil(lambda: "+A line I added myself." in review.diff.toPlainText(), timeout=5_000)
    assert "--- v1" in review.diff.toPlainText()


def test_commit_shows_progress_then_the_link(qtbot: QtBot, review: TilReviewWindow, github: FakeGitHub) -> None:
    review.commit_button.click()
    assert "Waiting" in review.commit_state.text() or "Committing" in review.commit_state.text()
    qtbot.waitUntil(lambda: "Committed:" in review.commit_state.text(), timeout=20_000)
    assert github.commits[0]["html_url"] in review.commit_state.text()
    assert review.commits.count() == 1


def test_closing_with_unsaved_edits_asks_and_a_crash_keeps_a_draft(
    qtbot: QtBot, review: TilReviewWindow, live_context: AppContext
) -> None:
    asked: list[bool] = []

    def cancel() -> bool:  # the user says Cancel
        asked.append(True)
        return False

    review.ask_to_discard = cancel
    review.editor.appendPlainText("\nNot saved yet.")
    qtbot.waitUntil(lambda: review.draft_path.exists(), timeout=5_000)  # kept on disk while typing
    assert review.close() is False  # the close was refused: still open, the edit still there
    assert asked == [True]
    assert review.editor.toPlainText().endswith("Not saved yet.")

    again = TilReviewWindow(live_context, review.local_date)  # as after a crash: the draft is offered back
    qtbot.addWidget(again)
    qtbot.waitUntil(lambda: not again.restore_button.isHidden(), timeout=5_000)
    again.restore_button.click()
    assert again.editor.toPlainText().endswith("Not saved yet.")
    assert again.dirty()
    review.ask_to_discard = lambda: True
    again.ask_to_discard = lambda: True
