"""Settings: the connection test runs off the GUI thread; saving stores the key in the keyring only."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from san_desktop.core.logging_setup import setup_logging
from san_desktop.core.settings import SETTINGS_FILE
from san_desktop.services.secrets import AI_API_KEY, GITHUB_TOKEN, SERVICE
from san_desktop.ui.common.context import AppContext
from san_desktop.ui.settings.dialog import SettingsDialog
from tests.support.failing_keyring import REASON, FailingKeyring
from tests.support.git_repo import user_repository
from tests.support.github_server import TOKEN as GITHUB_TOKEN_VALUE
from tests.support.github_server import fake_github_server
from tests.support.memory_keyring import MemoryKeyring
from tests.support.openai_server import FakeOpenAI, fake_openai_server


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai_server() as fake:
        yield fake


def _dialog(qtbot: QtBot, context: AppContext, server: FakeOpenAI) -> SettingsDialog:
    dialog = SettingsDialog(context)
    qtbot.addWidget(dialog)
    dialog.provider.setCurrentIndex(1)
    dialog.base_url.setText(server.url)
    dialog.chat_model.setText("gpt-test")
    dialog.embedding_model.setText("embed-test")
    dialog.timeout.setValue(5)
    return dialog


def test_test_connection_reports_success_without_blocking(
    qtbot: QtBot, context: AppContext, server: FakeOpenAI
) -> None:
    dialog = _dialog(qtbot, context, server)
    server.behaviour = "slow"  # the GUI thread must not wait for it
    dialog.test_button.click()
    assert dialog.status.text().startswith("Asking")  # returned at once
    assert not dialog.test_button.isEnabled()
    server.behaviour = "ok"
    server.release.set()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Connected"), timeout=15_000)
    assert dialog.test_button.isEnabled()
    assert "SQLite WAL" in dialog.status.text()  # the server's card title, quoted back
    assert {request.path for request in server.requests} == {"/v1/embeddings", "/v1/chat/completions"}


def test_test_connection_explains_a_refused_connection(qtbot: QtBot, context: AppContext, server: FakeOpenAI) -> None:
    dialog = _dialog(qtbot, context, server)
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dialog.base_url.setText(f"http://127.0.0.1:{port}/v1")
    dialog.test_button.click()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Failed"), timeout=15_000)
    assert "refused" in dialog.status.text().lower()
    assert "Error" not in dialog.status.text()  # in words, without the HTTP library's class names
    assert server.requests == []


def test_test_connection_explains_a_failure(qtbot: QtBot, context: AppContext, server: FakeOpenAI) -> None:
    dialog = _dialog(qtbot, context, server)
    server.behaviour = "401"
    dialog.test_button.click()
    qtbot.waitUntil(lambda: dialog.status.text().startswith("Failed"), timeout=15_000)
    assert "401 Unauthorized" in dialog.status.text()


def test_saving_keeps_the_key_in_the_keyring_only(
    qtbot: QtBot, context: AppContext, server: FakeOpenAI, isolated_environment: MemoryKeyring
) -> None:
    dialog = _dialog(qtbot, context, server)
    dialog.api_key.setText("sk-secret-in-keyring-123456")
    with qtbot.waitSignal(dialog.accepted, timeout=5_000):
        dialog._on_save()
    assert isolated_environment.secrets[(SERVICE, AI_API_KEY)] == "sk-secret-in-keyring-123456"
    saved = (context.app.data_dir / SETTINGS_FILE).read_text(encoding="utf-8")
    assert "sk-secret" not in saved
    assert json.loads(saved)["ai"]["provider"] == "openai"
    assert context.settings.ai.base_url == server.url
    assert context.app.providers.embedding_model() == "embed-test"


def test_github_test_says_what_works_and_the_token_goes_to_the_keyring_only(
    qtbot: QtBot, context: AppContext, isolated_environment: MemoryKeyring
) -> None:
    with fake_github_server() as github:
        dialog = SettingsDialog(context)
        qtbot.addWidget(dialog)
        dialog.github_url.setText(github.url)
        dialog.repository.setText("me/til")
        dialog.github_token.setText("wrong-token-1234567890")
        dialog.github_test_button.click()
        qtbot.waitUntil(lambda: dialog.github_status.text().startswith("Failed"), timeout=15_000)
        assert "GitHub rejected the token" in dialog.github_status.text()
        dialog.github_token.setText(GITHUB_TOKEN_VALUE)
        dialog.github_test_button.click()
        qtbot.waitUntil(lambda: dialog.github_status.text().startswith("OK"), timeout=15_000)
        assert dialog.github_status.text() == "OK: tester can push to me/til (main)."
        assert all(r.headers.get("X-GitHub-Api-Version") == "2022-11-28" for r in github.requests)
        with qtbot.waitSignal(dialog.accepted, timeout=5_000):
            dialog._on_save()
    assert isolated_environment.secrets[(SERVICE, GITHUB_TOKEN)] == GITHUB_TOKEN_VALUE
    saved = (context.app.data_dir / SETTINGS_FILE).read_text(encoding="utf-8")
    assert GITHUB_TOKEN_VALUE not in saved
    assert json.loads(saved)["github"]["repository"] == "me/til"


def test_notification_switches_are_saved(qtbot: QtBot, context: AppContext) -> None:
    dialog = SettingsDialog(context)
    qtbot.addWidget(dialog)
    assert all(dialog.notify_boxes[key].isChecked() for key in ("cards_ready", "til_ready", "failures"))
    dialog.notify_boxes["cards_ready"].setChecked(False)
    dialog.notify_boxes["do_not_disturb"].setChecked(True)
    with qtbot.waitSignal(dialog.accepted, timeout=5_000):
        dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()  # type: ignore[union-attr]
    saved = json.loads((context.app.data_dir / SETTINGS_FILE).read_text())["notifications"]
    assert saved == {
        "cards_ready": False,
        "til_ready": True,
        "commit_done": True,
        "failures": True,
        "do_not_disturb": True,
    }
    assert context.app.settings.notifications.do_not_disturb


# --- without a keyring (issue 24, item 3) -----------------------------------------------------------


def _keyring_less_dialog(qtbot: QtBot, context: AppContext, failing: FailingKeyring) -> SettingsDialog:
    keyring.set_keyring(failing)  # (the autouse fixture puts the memory one back)
    dialog = SettingsDialog(context)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.github_token_field.note.text() != "", timeout=5_000)
    return dialog


def test_without_a_keyring_the_dialog_names_the_environment_variables(qtbot: QtBot, context: AppContext) -> None:
    dialog = _keyring_less_dialog(qtbot, context, FailingKeyring())
    qtbot.waitUntil(lambda: dialog.api_key_field.note.text() != "", timeout=5_000)
    assert "GH_TOKEN" in dialog.github_token_field.note.text()
    assert "OPENAI_API_KEY" in dialog.api_key_field.note.text()
    assert "Error" not in dialog.github_token_field.note.text()
    dialog.github_test_button.click()  # Test GitHub says the same, not "enter one or run san github token set"
    qtbot.waitUntil(lambda: dialog.github_status.text().startswith("Failed"), timeout=5_000)
    assert "GH_TOKEN" in dialog.github_status.text()
    assert "token set" not in dialog.github_status.text()


def test_without_a_keyring_saving_keeps_every_other_setting_and_says_why_beside_the_field(
    qtbot: QtBot, context: AppContext, server: FakeOpenAI, data_dir: Path
) -> None:
    log_file = setup_logging(data_dir, stderr=False)
    failing = FailingKeyring()
    dialog = _keyring_less_dialog(qtbot, context, failing)
    accepted: list[bool] = []
    dialog.accepted.connect(lambda: accepted.append(True))
    dialog.provider.setCurrentIndex(1)
    dialog.base_url.setText(server.url)
    dialog.chat_model.setText("gpt-test")
    dialog.repository.setText("me/til")
    dialog.api_key.setText("sk-typed-0123456789abcdef")
    dialog.github_token.setText("ghp_typedTOKEN0123456789abcdefABCDEF")
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: dialog.save_status.text() != "", timeout=5_000)
    assert not accepted  # still open: the secrets were not kept, and the user should know
    saved = json.loads((context.app.data_dir / SETTINGS_FILE).read_text(encoding="utf-8"))
    assert saved["ai"]["provider"] == "openai"  # the AI section was saved...
    assert saved["ai"]["base_url"] == server.url
    assert saved["github"]["repository"] == "me/til"  # ...and the GitHub one
    assert context.settings.ai.base_url == server.url  # and in use
    assert "The GitHub token was not stored" in dialog.github_token_field.note.text()
    assert "GH_TOKEN" in dialog.github_token_field.note.text()
    assert "The API key was not stored" in dialog.api_key_field.note.text()
    assert "OPENAI_API_KEY" in dialog.api_key_field.note.text()
    assert "token" not in dialog.status.text()  # not under the AI section: beside its own field
    dialog.github_token.clear()
    dialog.api_key.clear()
    with qtbot.waitSignal(dialog.accepted, timeout=5_000):  # nothing left to refuse: closes
        dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save).click()  # type: ignore[union-attr]
    logging.shutdown()
    log = log_file.read_text(encoding="utf-8")
    assert log.count(REASON) <= 3, log  # the failed read once, and each refused store once
    assert "sk-typed" not in log
    assert "ghp_typed" not in log


def test_with_a_local_target_the_test_checks_the_folder_in_the_dialogs_words(
    qtbot: QtBot, context: AppContext, tmp_path: Path
) -> None:
    """Issue 24: with "A local git repository" chosen, Test GitHub asked for a GitHub token; a folder that is
    not a git repository must read so, naming the field the dialog shows (not github.local_repository)."""
    dialog = SettingsDialog(context)
    qtbot.addWidget(dialog)
    dialog.commit_target.setCurrentIndex(dialog.commit_target.findData("local"))
    assert dialog.github_test_button.text() == "Test repository"
    plain = tmp_path / "notes"
    plain.mkdir()
    dialog.local_repository.setText(str(plain))
    dialog.github_test_button.click()
    qtbot.waitUntil(lambda: dialog.github_status.text().startswith("Failed"), timeout=5_000)
    said = dialog.github_status.text()
    assert f"The folder {plain} is not a git repository" in said
    assert "Local repository" in said
    assert "github.local_repository" not in said
    assert "token" not in said

    dialog.local_repository.clear()
    dialog.github_test_button.click()
    qtbot.waitUntil(lambda: "No local git repository is set" in dialog.github_status.text(), timeout=5_000)

    repository = user_repository(tmp_path / "til")
    dialog.local_repository.setText(str(repository))
    dialog.github_test_button.click()
    qtbot.waitUntil(lambda: dialog.github_status.text().startswith("OK"), timeout=5_000)
    assert dialog.github_status.text() == f"OK: {repository} takes TIL commits on the branch til."


# --- on a small screen (issue 38, item 15) -----------------------------------------------------------


@pytest.mark.qt_log_ignore("propagateSizeHints")
def test_with_every_note_shown_save_and_cancel_stay_on_the_screen_and_the_sections_scroll(
    qtbot: QtBot, context: AppContext
) -> None:
    """The dialog was 914–990 px tall with no scroll area: on a 900-px screen Save and Cancel were off it."""
    dialog = _keyring_less_dialog(qtbot, context, FailingKeyring())
    dialog.provider.setCurrentIndex(1)  # the API key's note shows too
    dialog.show()
    qtbot.waitExposed(dialog)
    qtbot.waitUntil(lambda: dialog.api_key_field.note.isVisible(), timeout=5_000)
    dialog._tell(dialog.status, "Failed: " + "the server said no. " * 20)  # a long status grows it further
    free = dialog.screen().availableGeometry()
    assert free.contains(dialog.frameGeometry())
    box = dialog.findChild(QDialogButtonBox)
    assert box is not None
    for which in (QDialogButtonBox.StandardButton.Save, QDialogButtonBox.StandardButton.Cancel):
        button = box.button(which)
        assert free.contains(QRect(button.mapToGlobal(QPoint(0, 0)), button.size()))
    assert dialog.sections.sizeHint().height() > free.height()  # this screen is too small for all of it:
    assert dialog.scroller.verticalScrollBar().maximum() > 0  # the sections scroll instead
    assert dialog.scroller.horizontalScrollBar().maximum() == 0  # down, never sideways
