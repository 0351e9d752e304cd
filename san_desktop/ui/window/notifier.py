"""Notifications of finished work: job outcomes gathered while a burst lasts and told once ("12 cards
ready", "2 jobs failed — click to open the monitor"), each kind switchable in the settings, all silenced
by do-not-disturb. Where they are shown (the tray, or the status bar without one) is the window's call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from PySide6.QtCore import QObject, QTimer

from san_desktop.app import Changes
from san_desktop.core.enums import JobStatus, JobType
from san_desktop.core.settings import NotificationSettings
from san_desktop.queue.payloads import CardAnalysisPayload, load_payload
from san_desktop.queue.records import JobRecord

QUIET_MS = 1500  # a burst is over when nothing new finished for this long
LONGEST_WAIT_MS = 10_000  # a burst that goes on is told at least this often


class NoticeKind(StrEnum):
    CARDS_READY = "cards_ready"  # the names of NotificationSettings' switches
    TIL_READY = "til_ready"
    COMMIT_DONE = "commit_done"
    FAILURES = "failures"


@dataclass(frozen=True)
class Notice:
    title: str
    text: str
    page: str  # the page a click opens: "cards", "til", "quizzes" or "jobs" (then filtered to failures)
    failures: bool  # the click should show the failed jobs


def _kind_of(job: JobRecord) -> NoticeKind | None:
    """What a job that came to an end (``Changes.finished``: it was not so before) is news of."""
    if job.status is JobStatus.FAILED:
        return NoticeKind.FAILURES
    if job.status is not JobStatus.COMPLETED:
        return None
    if job.job_type is JobType.CARD_ANALYSIS:
        return None if load_payload(CardAnalysisPayload, job.payload).embed_only else NoticeKind.CARDS_READY
    return {JobType.TIL_GENERATION: NoticeKind.TIL_READY, JobType.TIL_GITHUB_COMMIT: NoticeKind.COMMIT_DONE}.get(
        job.job_type
    )


def compose(counts: dict[NoticeKind, int]) -> Notice | None:
    """One message for everything a burst finished; failures lead (their click opens the monitor)."""
    parts: list[str] = []
    if n := counts.get(NoticeKind.CARDS_READY, 0):
        parts.append(f"{n} card{'s' if n != 1 else ''} ready")
    if n := counts.get(NoticeKind.TIL_READY, 0):
        parts.append("TIL ready" if n == 1 else f"{n} TILs ready")
    if n := counts.get(NoticeKind.COMMIT_DONE, 0):
        parts.append("TIL committed" if n == 1 else f"{n} TILs committed")
    failed = counts.get(NoticeKind.FAILURES, 0)
    if failed:
        text = f"{failed} job{'s' if failed != 1 else ''} failed — click to open the monitor"
        if parts:
            text += f" ({', '.join(parts)})"
        return Notice("SAN Desktop: jobs failed", text, "jobs", True)
    if not parts:
        return None
    page = "cards" if counts.get(NoticeKind.CARDS_READY) else "til"
    return Notice("SAN Desktop", ", ".join(parts), page, False)


class Notifier(QObject):
    """Gathers the jobs that came to an end (the change hub's ``Changes.finished``: connect ``on_hub_changed``) and
    calls ``show`` once per burst. No signals of its own."""

    def __init__(
        self,
        settings: Callable[[], NotificationSettings],
        show: Callable[[Notice], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._settings = settings
        self._show = show
        self._counts: dict[NoticeKind, int] = {}
        self._quiet = QTimer(self)
        self._quiet.setSingleShot(True)
        self._quiet.setInterval(QUIET_MS)
        self._longest = QTimer(self)
        self._longest.setSingleShot(True)
        self._longest.setInterval(LONGEST_WAIT_MS)
        self._quiet.timeout.connect(self.flush)
        self._longest.timeout.connect(self.flush)

    def on_hub_changed(self, changes: Changes, _initiator: object) -> None:
        if not changes.finished:
            return
        wanted = self._settings()
        if wanted.do_not_disturb:
            return
        told = False
        for job in changes.finished:
            kind = _kind_of(job)
            if kind is not None and getattr(wanted, kind.value):
                self._counts[kind] = self._counts.get(kind, 0) + 1
                told = True
        if not told:
            return
        self._quiet.start()  # (re)started: the burst goes on
        if not self._longest.isActive():
            self._longest.start()

    @property
    def pending(self) -> bool:
        return bool(self._counts)

    def flush(self) -> None:
        """Tell what was gathered now (a burst ended, or went on too long)."""
        self._quiet.stop()
        self._longest.stop()
        counts, self._counts = self._counts, {}
        notice = compose(counts)
        if notice is not None and not self._settings().do_not_disturb:
            self._show(notice)

    def stop(self) -> None:
        self._quiet.stop()
        self._longest.stop()
        self._counts = {}
