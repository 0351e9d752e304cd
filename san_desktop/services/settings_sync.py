"""The settings of one data directory, kept in step with whoever else writes them: ``settings.json`` (the command
line beside an open window, `san config set`), and on a server's library the values every machine shares
(``services.library_settings``). Saving refuses to overwrite what another program wrote since it was loaded."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from san_desktop.ai.factory import embedding_model_of
from san_desktop.core.enums import JobPool
from san_desktop.core.errors import SanError
from san_desktop.core.settings import (
    SETTINGS_FILE,
    Settings,
    load_settings_checked,
    save_settings,
    shared_values,
    with_shared,
    with_value,
)
from san_desktop.db.changes import ChangeLog
from san_desktop.db.database import Database
from san_desktop.services.changes import Changes

log = logging.getLogger(__name__)


class SettingsConflictError(SanError):
    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} was changed by another program (perhaps `san config set`) since these settings were "
            "loaded. Look at the settings again, or save once more to overwrite them."
        )


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    return (info.st_mtime_ns, info.st_size)


class SettingsSync:
    """Loads the settings (``settings``; what was wrong in the file: ``problems``), saves them (``save``) and takes
    up other programs' (``reload``); each of those hands the settings in use to ``apply`` (the facade's parts take
    them up) and returns what changed. Saving and taking up run one at a time: a poll that read the settings before a
    save must not hand back the old ones after it."""

    def __init__(self, db: Database, data_dir: Path, changelog: ChangeLog, *, seed: bool) -> None:
        """``seed``: the first machine's own values become a server library's shared ones when it keeps none yet (a
        command that only reads leaves a library without shared settings as it is)."""
        self.db = db
        self.path = data_dir / SETTINGS_FILE
        self.changelog = changelog
        self.apply: Callable[[Settings], None] = lambda _settings: None
        settings, self.problems = load_settings_checked(data_dir)
        for problem in self.problems:
            log.warning("settings.json: %s", problem)
        self._settings = self._with_library_settings(settings, seed=seed)
        self._stamp = _stamp(self.path)
        self._lock = threading.Lock()

    @property
    def settings(self) -> Settings:
        return self._settings

    def save(self, settings: Settings, *, overwrite: bool = False) -> Changes:
        """Write and apply ``settings``. Refuses (``SettingsConflictError``) to silently overwrite a file another
        process changed since it was loaded, unless ``overwrite``."""
        with self._lock:
            return self._save(settings, overwrite=overwrite)

    def _save(self, settings: Settings, *, overwrite: bool) -> Changes:
        if not overwrite and _stamp(self.path) != self._stamp:
            raise SettingsConflictError(self.path)
        if self.db.shares_library and shared_values(settings) != shared_values(self._settings):
            from san_desktop.services.library_settings import write_shared

            write_shared(self.db, settings, self.changelog)
        save_settings(self.path.parent, settings)
        self._stamp = _stamp(self.path)
        return self._use(settings)

    def update(self, change: Callable[[Settings], Settings]) -> Changes:
        """Take up another program's settings, then save ``change`` of them, in one step: a save by another thread
        in between is neither lost nor overwritten. Nothing is written when ``change`` leaves them as they are."""
        with self._lock:
            changes = self._reload()
            settings = change(self._settings)
            if settings == self._settings:
                return changes
            return changes | self._save(settings, overwrite=False)

    def set_pool_paused(self, pool: JobPool, paused: bool) -> Changes:
        """Pause or resume a pool, remembered in the settings."""
        return self.update(lambda settings: with_value(settings, "jobs", settings.jobs.pause_key(pool), paused))

    def reload(self) -> Changes:
        """Take up ``settings.json`` if another process changed it, and (a library on a server) the library's
        shared settings if another machine changed them; no changes otherwise."""
        with self._lock:
            return self._reload()

    def _reload(self) -> Changes:
        stamp = _stamp(self.path)
        if stamp == self._stamp:
            if not self.db.shares_library:
                return Changes()
            merged = self._with_library_settings(self._settings)
            if merged == self._settings:
                return Changes()
            return replace(self._use(merged), external=True)
        settings, problems = load_settings_checked(self.path.parent)
        settings = self._with_library_settings(settings)
        self.problems = problems
        self._stamp = stamp
        return replace(self._use(settings), external=True)

    def _with_library_settings(self, settings: Settings, *, seed: bool = False) -> Settings:
        """``settings`` with the values a library on a server keeps for all its machines; with ``seed``, the first
        machine's own values become the library's when it keeps none yet. A SQLite library's are its file's."""
        if not self.db.shares_library:
            return settings
        from san_desktop.services.library_settings import read_shared, write_shared  # (the ORM: a server's only)

        shared = read_shared(self.db)
        if not shared and seed:  # (the first machine: nobody has other values to be told of)
            write_shared(self.db, settings, self.changelog, announce=False)
            return settings
        merged, problems = with_shared(settings, shared)
        for problem in problems:
            log.warning("library settings: %s", problem)
        return merged

    def _use(self, settings: Settings) -> Changes:
        old = self._settings
        embedding_changed = embedding_model_of(old.ai) != embedding_model_of(settings.ai)
        self.apply(settings)
        # last: whoever sees the new settings (another thread) finds them in use already
        self._settings = settings
        return Changes(
            settings=settings != old,
            ai_settings_changed=settings.ai != old.ai,
            embedding_model_changed=embedding_changed,
        )
