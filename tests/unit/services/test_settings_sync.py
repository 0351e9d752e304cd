"""Saving and taking up the settings from two threads (the window's write and the change hub's poll): one at a time,
so neither hands back what the other replaced (CI seeds 7117 and 20533: a poll that had read the library's settings
before a save put the old ones back, and the clipboard watcher or the browser endpoint stayed on)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from san_desktop.core.settings import Settings, load_settings
from san_desktop.db.changes import ChangeLog
from san_desktop.services import library_settings
from san_desktop.services.settings_sync import SettingsSync


@dataclass
class _ServerLibrary:
    """What the settings ask of a library on a server; its shared settings are ``read_shared``'s (patched)."""

    shares_library: bool = True


class _TellingLock:
    """The settings' lock, saying when a thread has to wait for it (the test's condition to go on)."""

    def __init__(self, on_wait: threading.Event) -> None:
        self._lock = threading.Lock()
        self._on_wait = on_wait

    def __enter__(self) -> None:
        if not self._lock.acquire(blocking=False):
            self._on_wait.set()
            self._lock.acquire()

    def __exit__(self, *_exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._lock.release()


def _watching(settings: Settings, watch: bool) -> Settings:
    return replace(settings, capture=replace(settings.capture, watch_clipboard=watch))


def _sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, meanwhile: list[Any]
) -> tuple[SettingsSync, threading.Event]:
    """A server library's settings whose next read of the shared values first runs ``meanwhile``'s call on another
    thread, until it is done or waits for this one."""
    done_or_waiting = threading.Event()

    def read_shared(_db: object) -> dict[str, Any]:
        if meanwhile:
            other = threading.Thread(target=meanwhile.pop())
            other.start()
            assert done_or_waiting.wait(10)
            meanwhile.append(other)
        return {}

    monkeypatch.setattr(library_settings, "read_shared", read_shared)
    sync = SettingsSync(_ServerLibrary(), tmp_path, ChangeLog("this-window"), seed=False)  # type: ignore[arg-type]
    sync._lock = _TellingLock(done_or_waiting)  # type: ignore[assignment]
    return sync, done_or_waiting


def test_a_poll_that_read_the_settings_before_a_save_does_not_put_the_old_ones_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    meanwhile: list[Any] = []
    sync, done_or_waiting = _sync(tmp_path, monkeypatch, meanwhile)
    watching = _watching(sync.settings, True)

    def save() -> None:
        sync.save(watching)
        done_or_waiting.set()

    meanwhile.append(save)
    assert not sync.reload().settings  # the save waited for it
    meanwhile.pop().join(10)
    assert sync.settings == watching
    assert load_settings(tmp_path).capture.watch_clipboard


def test_an_update_keeps_what_another_thread_saved_meanwhile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    meanwhile: list[Any] = []
    sync, done_or_waiting = _sync(tmp_path, monkeypatch, meanwhile)
    bigger = replace(sync.settings.capture, max_bytes=2_000_000)

    def update_max_bytes() -> None:
        sync.update(lambda settings: replace(settings, capture=replace(settings.capture, max_bytes=bigger.max_bytes)))
        done_or_waiting.set()

    meanwhile.append(update_max_bytes)
    changes = sync.update(lambda settings: _watching(settings, True))
    meanwhile.pop().join(10)
    assert changes.settings
    assert sync.settings.capture == replace(bigger, watch_clipboard=True)
    assert load_settings(tmp_path).capture == replace(bigger, watch_clipboard=True)


def test_an_update_that_changes_nothing_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sync, _ = _sync(tmp_path, monkeypatch, [])
    assert not sync.update(lambda settings: settings).settings
    assert not (tmp_path / "settings.json").exists()
