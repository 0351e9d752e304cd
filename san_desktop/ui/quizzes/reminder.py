"""The daily quiz reminder: at ``quiz.reminder_time`` (the computer's local time; "" for none), or as soon
after it as the app runs that day, "N quizzes due" if any are, through the window's notifications."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import date, datetime

from PySide6.QtCore import QObject, QTimer

from san_desktop.app import SanApp
from san_desktop.core.errors import SanError
from san_desktop.ui.common.ops import Ops
from san_desktop.ui.window.notifier import Notice

log = logging.getLogger(__name__)

CHECK_MS = 60_000  # the reminder time is looked at once a minute


def due_notice(total: int) -> Notice:
    return Notice("SAN Desktop", f"{total} quiz{'zes' if total != 1 else ''} due", "quizzes", False)


def _local_now() -> datetime:
    return datetime.now().astimezone()


class QuizReminder(QObject):
    """Checks the time every minute (and once when started); the day's reminder is shown at most once.
    No signals of its own: ``show`` gets the notice.

    ``now`` (the local time) may be replaced, so a test need not wait for a real minute or a real morning.
    """

    def __init__(self, app: SanApp, ops: Ops, show: Callable[[Notice], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._app = app
        self._ops = ops
        self._show = show
        self.now: Callable[[], datetime] = _local_now
        # Kept in memory only: a restart later on a day whose reminder was shown may remind again.
        self.reminded_on: date | None = None
        self._checking = False
        self._timer = QTimer(self)
        self._timer.setInterval(CHECK_MS)
        self._timer.timeout.connect(self._on_timer_timeout)

    def start(self) -> None:
        self._timer.start()
        self.check()  # the time may have passed today before the app started

    def stop(self) -> None:
        self._timer.stop()

    def due_time_reached(self, now: datetime) -> bool:
        """Whether today's reminder is owed at ``now``: a reminder time is set, it has come, and today's
        reminder was not given yet."""
        at = self._app.settings.quiz.reminder_time
        if not at or self.reminded_on == now.date():
            return False
        hour, minute = (int(part) for part in at.split(":"))
        return (now.hour, now.minute) >= (hour, minute)

    def check(self) -> None:
        """Remind now if today's reminder is owed. Do-not-disturb takes the day's reminder away (as it does
        every other notification), and a day without due quizzes has none."""
        now = self.now()
        if self._checking or not self.due_time_reached(now):
            return
        today = now.date()
        if self._app.settings.notifications.do_not_disturb:
            self.reminded_on = today
            return
        self._checking = True

        def counted(total: int) -> None:
            self._checking = False
            self.reminded_on = today
            if total and not self._app.settings.notifications.do_not_disturb:
                self._show(due_notice(total))

        def failed(exc: SanError) -> None:
            self._checking = False  # tried again at the next minute
            log.warning("Could not count the due quizzes for the reminder: %s", exc)

        self._ops.run(lambda: self._app.quizzes.due_counts().total, counted, failed)

    def _on_timer_timeout(self) -> None:
        self.check()
