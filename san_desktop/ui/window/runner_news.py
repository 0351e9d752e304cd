"""What the job runner has to tell the person at the window: jobs running unusually long and the AI
server failing or answering again (the status bar), jobs resumed after a crash (a banner linking to them)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject

from san_desktop.jobs.breaker import BreakerState
from san_desktop.jobs.runner import BreakerChange, JobRunner
from san_desktop.services.recovery.sweep import SweepReport
from san_desktop.ui.window.banner import Banner


class RunnerNews(QObject):
    """Turns the runner's signals into sentences. No signals of its own: ``show_resumed`` is called with
    the resumed jobs' ids when the banner's link is followed."""

    def __init__(
        self,
        runner: JobRunner,
        banner: Banner,
        say: Callable[[str, int], None],
        show_resumed: Callable[[frozenset[str]], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._banner = banner
        self._say = say
        self._show_resumed = show_resumed
        self._sweeps_seen = 0
        self._resumed: frozenset[str] = frozenset()
        runner.stalled.connect(self._on_runner_stalled)
        runner.breaker_changed.connect(self._on_runner_breaker_changed)
        runner.sweep_finished.connect(self._on_runner_sweep_finished)
        banner.link_activated.connect(self._on_banner_link_activated)

    def _on_runner_stalled(self, job_ids: list[str]) -> None:
        self._say(
            f"{len(job_ids)} job(s) have been running for unusually long; see Jobs. They are not started twice.",
            30_000,
        )

    def _on_runner_breaker_changed(self, change: BreakerChange) -> None:
        if change.status.state is BreakerState.OPEN and change.status.held is not None:
            self._say(f"AI jobs {change.status.describe()}.", 0)  # until it is fixed: it will not pass by itself
        elif change.status.state is BreakerState.OPEN:
            self._say(f"AI server unreachable or failing: AI jobs {change.status.describe()}.", 30_000)
        elif change.status.state is BreakerState.CLOSED:
            self._say("AI server answers again; AI jobs resumed.", 10_000)

    def _on_runner_sweep_finished(self, report: SweepReport) -> None:
        """Jobs a crash (or a machine that stopped) left running are told in the banner; those a quit left to the
        next start (it could not wait for them) only in the status bar: nothing unexpected happened to them."""
        self._sweeps_seen += 1
        after_quit = set(report.requeued_after_quit)
        resumed = [job_id for job_id in report.requeued_interrupted if job_id not in after_quit]
        if after_quit:
            self._say(f"{_jobs(len(after_quit))} stopped when SAN Desktop was last closed resumed.", 10_000)
        if not resumed:
            return
        self._resumed = frozenset(resumed)
        were = "were" if len(resumed) != 1 else "was"
        if self._sweeps_seen == 1:
            text = f"{_jobs(len(resumed))} interrupted when SAN Desktop last closed unexpectedly {were} resumed."
        else:
            text = (
                f"{_jobs(len(resumed))} interrupted when another SAN Desktop process ended unexpectedly {were} resumed."
            )
        self._banner.tell(text, "Show them")

    def _on_banner_link_activated(self) -> None:
        self._show_resumed(self._resumed)


def _jobs(count: int) -> str:
    return f"{count} jobs" if count != 1 else "1 job"
