"""The review-and-commit window: edit, Save as a new version, the diff shows it, Commit shows progress and
then the link with where it went; closing with unsaved edits asks; a draft left by a crash is offered back.
While it is open it follows the settings, shows where the file will really go before committing, names
the target of every commit, and lets Commit go again once the text, the path or the target changed."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from san_desktop.core.enums import CommitTarget, TilVersionKind
from san_desktop.core.settings import GitHubSettings
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.common.unsaved import Unsaved
from san_desktop.ui.til.review import TilReviewWindow
from tests.support.git_repo import git, user_repository
from tests.support.github_server import TOKEN, FakeGitHub, fake_github_server
from tests.support.processes import child_env, run_python
from tests.support.til import finished_til

OpenReview = Callable[..., TilReviewWindow]
ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.qt_log_ignore("propagateSizeHints")  # the offscreen platform, for a window it shows


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with fake_github_server() as fake:
        yield fake


@pytest.fixture
def day(live_context: AppContext, github: FakeGitHub) -> str:
    app = live_context.app
    app.save_settings(replace(app.settings, github=GitHubSettings(api_url=github.url, repository="me/til")))
    app.connections.set_github_token(TOKEN)
    made = finished_til(app)
    return made


@pytest.fixture
def open_review(qtbot: QtBot, live_context: AppContext, day: str) -> OpenReview:
    """Opens the day's review window (the runner started first), once its text and plan are shown."""

    def opened(ask: Callable[[QWidget, Sequence[str]], Unsaved] | None = None) -> TilReviewWindow:
        if not live_context.runner.started:
            with qtbot.waitSignal(live_context.runner.sweep_finished, timeout=10_000):
                live_context.start(poll_ms=100)
        window = TilReviewWindow(live_context, day) if ask is None else TilReviewWindow(live_context, day, ask=ask)
        qtbot.addWidget(window)
        qtbot.waitUntil(lambda: window.editor.toPlainText().startswith("# TIL"), timeout=5_000)
        qtbot.waitUntil(lambda: window.commit.path.text() != "", timeout=10_000)
        return window

    return opened


@pytest.fixture
def review(open_review: OpenReview) -> TilReviewWindow:
    return open_review()


def set_local_repository(qtbot: QtBot, context: AppContext, folder: Path) -> None:
    """As the Settings dialog saves it: written, and announced to every window."""
    app = context.app
    settings = replace(app.settings, github=replace(app.settings.github, local_repository=str(folder)))
    with qtbot.waitSignal(context.hub.changed, timeout=5_000):
        context.ops.write(lambda: app.save_settings(settings))


def commit_and_wait(qtbot: QtBot, review: TilReviewWindow) -> str:
    tab = review.commit
    qtbot.waitUntil(tab.commit_button.isEnabled, timeout=10_000)
    tab.commit_button.click()
    qtbot.waitUntil(lambda: "Committed v" in tab.commit_state.text(), timeout=20_000)
    return tab.commit_state.text()


def choose_target(qtbot: QtBot, review: TilReviewWindow, target: CommitTarget) -> None:
    tab = review.commit
    tab.target.setCurrentIndex(tab.target.findData(target))
    tab.target.activated.emit(tab.target.currentIndex())  # as a user's choice does


def type_path(qtbot: QtBot, review: TilReviewWindow, path: str) -> None:
    tab = review.commit
    tab.path.selectAll()
    qtbot.keyClicks(tab.path, path)


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


def test_commit_shows_progress_then_the_link_and_where(
    qtbot: QtBot, review: TilReviewWindow, github: FakeGitHub
) -> None:
    tab = review.commit
    qtbot.waitUntil(tab.commit_button.isEnabled, timeout=10_000)
    tab.commit_button.click()
    assert "Waiting for a worker to commit to GitHub me/til (branch main)" in tab.commit_state.text()
    qtbot.waitUntil(lambda: "Committed v" in tab.commit_state.text(), timeout=20_000)
    shown = tab.commit_state.text()
    assert "to GitHub me/til (branch main) at TIL/" in shown
    assert github.commits[0]["html_url"] in shown
    assert tab.commits.count() == 1
    assert "on GitHub me/til (branch main)" in tab.commits.item(0).text()
    qtbot.waitUntil(lambda: "was already committed" in tab.placement.text(), timeout=5_000)
    assert not tab.commit_button.isEnabled()  # and it says why


def test_closing_with_unsaved_edits_asks_and_a_crash_keeps_a_draft(
    qtbot: QtBot, open_review: OpenReview, live_context: AppContext
) -> None:
    asked: list[Sequence[str]] = []

    def cancel(_parent: QWidget, what: Sequence[str]) -> Unsaved:  # the user says Cancel
        asked.append(what)
        return Unsaved.CANCEL

    review = open_review(ask=cancel)
    review.editor.appendPlainText("\nNot saved yet.")
    qtbot.waitUntil(lambda: review.draft_path.exists(), timeout=5_000)  # kept on disk while typing
    assert review.close() is False  # the close was refused: still open, the edit still there
    assert asked == [[f"the TIL of {review.local_date}"]]
    assert review.editor.toPlainText().endswith("Not saved yet.")

    again = TilReviewWindow(live_context, review.local_date, ask=lambda _parent, _what: Unsaved.DISCARD)
    qtbot.addWidget(again)  # as after a crash: the draft is offered back
    qtbot.waitUntil(lambda: not again.restore_button.isHidden(), timeout=5_000)
    again.restore_button.click()
    assert again.editor.toPlainText().endswith("Not saved yet.")
    assert again.dirty()
    review.discard_edits()  # (the window then closes without asking)


def test_closing_and_saving_closes_once_saved(qtbot: QtBot, open_review: OpenReview, live_context: AppContext) -> None:
    review = open_review(ask=lambda _parent, _what: Unsaved.SAVE)
    review.show()
    review.editor.appendPlainText("\nKept on closing.")
    with qtbot.waitSignal(review.closed, timeout=5_000):
        review.close()
    assert not review.isVisible()
    assert (live_context.app.til.get(review.local_date).markdown or "").endswith("Kept on closing.")
    assert not review.draft_path.exists()


def test_a_local_repository_set_in_settings_is_taken_up_while_open(
    qtbot: QtBot, review: TilReviewWindow, live_context: AppContext, tmp_path: Path
) -> None:
    tab = review.commit
    choose_target(qtbot, review, CommitTarget.LOCAL)
    qtbot.waitUntil(lambda: "No local git repository is set" in tab.placement.text(), timeout=5_000)
    assert not tab.commit_button.isEnabled()
    repository = user_repository(tmp_path / "notes")
    set_local_repository(qtbot, live_context, repository)
    qtbot.waitUntil(tab.commit_button.isEnabled, timeout=5_000)  # without switching the target away and back
    assert tab.where.text() == f"local {repository.resolve()} (branch til)"
    assert "is free" in tab.placement.text()
    shown = commit_and_wait(qtbot, review)
    assert f"to local {repository.resolve()} (branch til) at {tab.path.text()}" in shown
    assert git(repository, "show", f"til:{tab.path.text()}").stdout.startswith("# TIL")


def test_a_taken_path_is_shown_before_committing_and_committed_as_shown(
    qtbot: QtBot, review: TilReviewWindow, github: FakeGitHub
) -> None:
    tab = review.commit
    asked = tab.path.text()
    github.files[("main", asked)] = b"someone else's note"
    taken = asked.removesuffix(".md") + "-1.md"
    tab.refresh()  # (the file appeared after the window opened; a changed path or setting looks again too)
    qtbot.waitUntil(lambda: "exists" in tab.placement.text(), timeout=10_000)
    assert tab.placement.text().startswith(f"{asked} exists — will commit as {taken}.")
    assert "never replaces a file it did not write" in tab.placement.text()
    shown = commit_and_wait(qtbot, review)
    assert f"at {taken}" in shown
    assert tab.path.text() == taken  # the field says where it went
    assert github.files[("main", asked)] == b"someone else's note"  # never overwritten
    (put,) = github.writes()
    assert put.path == f"/repos/me/til/contents/{taken}"


def test_a_local_commit_is_not_shown_as_the_result_for_github(
    qtbot: QtBot, review: TilReviewWindow, live_context: AppContext, tmp_path: Path
) -> None:
    tab = review.commit
    repository = user_repository(tmp_path / "notes")
    set_local_repository(qtbot, live_context, repository)
    choose_target(qtbot, review, CommitTarget.LOCAL)
    qtbot.waitUntil(lambda: tab.where.text().startswith("local "), timeout=5_000)
    commit_and_wait(qtbot, review)
    choose_target(qtbot, review, CommitTarget.GITHUB)
    qtbot.waitUntil(lambda: tab.where.text() == "GitHub me/til (branch main)", timeout=10_000)
    qtbot.waitUntil(tab.commit_button.isEnabled, timeout=10_000)  # the same text, not yet on GitHub
    assert "Committed" not in tab.commit_state.text()  # that commit went to the local repository
    assert tab.commits.count() == 1
    assert f"on local {repository.resolve()} (branch til)" in tab.commits.item(0).text()


def test_commit_is_enabled_again_when_the_path_changes(
    qtbot: QtBot, review: TilReviewWindow, github: FakeGitHub
) -> None:
    tab = review.commit
    commit_and_wait(qtbot, review)
    qtbot.waitUntil(lambda: "was already committed" in tab.placement.text(), timeout=5_000)
    assert not tab.commit_button.isEnabled()
    type_path(qtbot, review, "notes/a-copy.md")
    qtbot.waitUntil(tab.commit_button.isEnabled, timeout=10_000)
    assert tab.placement.text() == "notes/a-copy.md is free: the file will be created."
    tab.commit_button.click()
    qtbot.waitUntil(lambda: len(github.commits) == 2, timeout=20_000)
    assert github.files[("main", "notes/a-copy.md")].startswith(b"# TIL")


def test_a_new_version_replacing_its_own_file_says_update(
    qtbot: QtBot, review: TilReviewWindow, github: FakeGitHub
) -> None:
    tab = review.commit
    assert tab.message.text().startswith("docs: add TIL - ")
    commit_and_wait(qtbot, review)
    path = tab.path.text()
    review.editor.appendPlainText("\nA second thought.")
    with qtbot.waitSignal(review.saved, timeout=5_000):
        review.save_button.click()
    qtbot.waitUntil(tab.commit_button.isEnabled, timeout=10_000)  # a new text: Commit again
    assert tab.message.text().startswith("docs: update TIL - ")
    assert tab.placement.text() == f"{path} holds this TIL's earlier version: it will be replaced."
    tab.commit_button.click()
    qtbot.waitUntil(lambda: len(github.commits) == 2, timeout=20_000)
    second = github.writes()[-1]
    assert second.body is not None
    assert second.body["message"].startswith("docs: update TIL - ")
    assert "sha" in second.body  # the earlier file replaced, not a new one
    assert "A second thought." in base64.b64decode(second.body["content"]).decode()


def test_the_window_fits_the_screen_it_opens_on(review: TilReviewWindow) -> None:
    review.show()
    free = review.screen().availableGeometry()
    assert free.contains(review.frameGeometry())
    assert review.width() <= 1200
    assert review.height() <= 800


def test_on_a_1366x768_screen_the_window_lies_inside_its_available_area(tmp_path: Path) -> None:
    screens = tmp_path / "screens.json"
    screens.write_text(
        json.dumps({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": 1366, "height": 768, "dpr": 1}]}),
        encoding="utf-8",
    )
    result = run_python(
        ["-m", "tests.support.review_window_geometry"],
        cwd=ROOT,
        env=child_env(QT_QPA_PLATFORM=f"offscreen:configfile={screens}"),
    )
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout.strip().splitlines()[-1])
    assert shown["available"] == [0, 0, 1366, 768]
    x, y, width, height = shown["frame"]
    assert x >= 0
    assert y >= 0
    assert x + width <= 1366
    assert y + height <= 768
    assert shown["size"] == [1200, 691]  # 90% of the height: room for a window manager's title bar
