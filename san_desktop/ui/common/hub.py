"""One hub announces every change to the pages (after Anki's ``operation_did_execute``): the window's own
writes, the job runner's events, and what other processes changed (the command line: database changes
within a poll, or as soon as a server's library tells of them; ``settings.json`` edits as soon as the file
watcher sees them). Every change comes in one way, ``tell``, and goes out one way, the ``changed`` signal: whoever
cares about changes (the pages, the notifications, the Stars page's activity) listens to that, never to the
runner. A library's server out of reach (restarting, the network down) is said once in the status bar and the
log, and looked for less often until it answers (the job runner's outage, shared)."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from san_desktop.app import Changes, SanApp
from san_desktop.core.errors import DatabaseUnreachableError, SanError
from san_desktop.jobs.outage import Outage
from san_desktop.queue.records import JobEvent

if TYPE_CHECKING:
    from san_desktop.jobs.runner import JobRunner
    from san_desktop.ui.common.ops import Ops

log = logging.getLogger(__name__)

TICK_MS = 50  # job events arrive in bursts: announce them together, once per tick
POLL_MS = 1000  # how often other processes' changes are looked for


class ChangeHub(QObject):
    """Signals:
    changed(object, object): the ``Changes`` and who asked for them (a page, or None); pages
        refresh what concerns them and may skip their own changes.
    message(str): news for the status bar (an expected failure nobody else reported).
    """

    changed = Signal(object, object)
    message = Signal(str)
    _told = Signal(object)  # a server's library told of another process's or machine's change notices

    def __init__(self, parent: QObject | None = None, outage: Outage | None = None) -> None:
        """``outage``: the library's server out of reach, as the job runner tracks it (said once for both)."""
        super().__init__(parent)
        self._outage = outage or Outage()
        self._said_away = False  # the status bar said the server cannot be reached
        self._poll_tried_at = 0.0  # when the poll under way started (``Outage.passed``)
        self._pending: list[Changes] = []
        self._tick = QTimer(self)
        self._tick.setSingleShot(True)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self._on_tick_timeout)
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._on_poll_timeout)
        # while the library's server is away: the next look once the outage's wait is over (not every poll)
        self._after_outage = QTimer(self)
        self._after_outage.setSingleShot(True)
        self._after_outage.timeout.connect(self._on_after_outage_timeout)
        self._watcher: QFileSystemWatcher | None = None
        self._app: SanApp | None = None
        self._ops: Ops | None = None
        self._polling = False
        self._bug_reported = False
        self._tell = self._told.emit  # (one bound method: the same to unwatch)
        self._told_by_server = False
        self._told.connect(self.poll_now)

    def tell(self, changes: Changes, initiator: object | None = None, *, background: bool = False) -> None:
        """The one way in. A write of this window (``initiator``: the page that asked, or None) is announced at
        once; ``background`` news (the runner's job events, other processes' changes, the browser's captures)
        with the rest of its tick, as one ``Changes``."""
        if background:
            self._pending.append(changes)
            if not self._tick.isActive():
                self._tick.start()
        elif changes:
            self.changed.emit(changes, initiator)

    def follow(self, runner: JobRunner) -> None:
        """Tell the runner's job events (each job's status change) as background news."""
        runner.job_changed.connect(self._on_runner_job_changed)

    def unfollow(self, runner: JobRunner) -> None:
        runner.job_changed.disconnect(self._on_runner_job_changed)

    def watch(self, app: SanApp, ops: Ops, poll_ms: int = POLL_MS) -> None:
        """Look for other processes' changes every ``poll_ms`` and whenever the data folder changes."""
        self._app, self._ops = app, ops
        self._poll.setInterval(poll_ms)
        self._poll.start()
        self._told_by_server = app.others.watch(self._tell)
        self._watcher = QFileSystemWatcher([str(app.data_dir)], self)
        self._watcher.directoryChanged.connect(self._on_watcher_directory_changed)

    def stop(self) -> None:
        self._poll.stop()
        self._tick.stop()
        self._after_outage.stop()
        if self._told_by_server and self._app is not None:
            self._app.others.unwatch(self._tell)
            self._told_by_server = False
        if self._watcher is not None:
            self._watcher.directoryChanged.disconnect(self._on_watcher_directory_changed)
            self._watcher = None

    def server_away(self, error: DatabaseUnreachableError) -> None:
        """The library's server did not answer (a poll, a page's read): said once for the outage, in the log
        (with the job runner's tries) and the status bar; the next poll that it answers says it is back."""
        self._outage.failed(error)
        self._say_away()

    def _say_away(self) -> None:
        if not self._said_away:
            self._said_away = True
            self.message.emit(
                "The database server cannot be reached; SAN Desktop keeps trying, and shows changes again once it "
                "answers."
            )

    def poll_now(self) -> None:
        if self._app is None or self._ops is None or self._polling:
            return
        self._polling = True
        self._poll_tried_at = self._outage.now()
        self._ops.run(
            self._app.poll_external,
            self._on_polled,
            self._on_poll_failed,
            on_bug=self._on_poll_bug,
            on_finished=self._on_poll_finished,
        )

    # --- slots --------------------------------------------------------------------------------

    def _on_runner_job_changed(self, event: JobEvent) -> None:
        self.tell(Changes.of_event(event), background=True)

    def _on_tick_timeout(self) -> None:
        pending, self._pending = Changes.merge(self._pending), []
        if pending:
            self.changed.emit(pending, None)

    def _on_poll_timeout(self) -> None:
        if self._told_by_server and self._app is not None and self._app.others.told:
            return  # the server tells of changes as they commit (settings.json: the file watcher)
        if self._outage.seconds_to_wait():  # the server is away (met here, by a job or by a page's read)
            self._say_away()
            if not self._after_outage.isActive():
                self._wait_out_outage()
            return
        self.poll_now()

    def _on_after_outage_timeout(self) -> None:
        if self._outage.seconds_to_wait():  # another try met the server away meanwhile: it waits longer
            self._wait_out_outage()
        else:
            self.poll_now()

    def _wait_out_outage(self) -> None:
        self._after_outage.start(int(self._outage.seconds_to_wait() * 1000) + 1)

    def _on_watcher_directory_changed(self, _path: str) -> None:
        self.poll_now()  # settings.json replaced (atomic rename) or the database written

    def _on_poll_finished(self) -> None:
        self._polling = False  # whatever happened: the next poll may start (a bug once stopped them for good)

    def _on_polled(self, changes: Changes) -> None:
        self._outage.passed(self._poll_tried_at)
        if self._said_away:
            self._said_away = False
            self.message.emit("The database server answers again; changes made elsewhere show once more.")
        if changes:
            self.tell(changes, background=True)

    def _on_poll_failed(self, exc: SanError) -> None:
        if isinstance(exc, DatabaseUnreachableError):
            self.server_away(exc)
            return
        log.warning("Could not look for changes made by other programs: %s", exc)

    def _on_poll_bug(self, exc: BaseException) -> None:
        """A bug: reported (the crash dialog) the first time; polls go on, and a repeat is only logged,
        not a dialog every second."""
        if self._bug_reported:
            log.warning("Looking for changes made by other programs failed again: %s", exc, exc_info=exc)
            return
        self._bug_reported = True
        sys.excepthook(type(exc), exc, exc.__traceback__)
