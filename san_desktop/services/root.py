"""The composition root of a library's services: each built once, and shared by the application's facade
(``SanApp``) and the job processors, so a processor calls the same service the window does instead of
building its own or writing rows itself."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING

from san_desktop.artifacts.store import ArtifactStore
from san_desktop.core.settings import Settings
from san_desktop.core.timeutil import local_zone, utcnow
from san_desktop.db.database import Database
from san_desktop.queue.store import JobStore
from san_desktop.services.artifact_stores import artifact_store
from san_desktop.services.scraps import ScrapService

if TYPE_CHECKING:
    from san_desktop.db.changes import ChangeLog
    from san_desktop.services.card_analysis import CardAnalysis
    from san_desktop.services.card_edits import CardEditService
    from san_desktop.services.commits import CommitService
    from san_desktop.services.quizzes import QuizService
    from san_desktop.services.stars import StarService
    from san_desktop.services.til import TilService
    from san_desktop.services.til_runs import TilRuns
    from san_desktop.services.trash import TrashService
    from san_desktop.web.page_reader import PageReader


def _no_token() -> str | None:
    return None


class Services:
    """The services of one library (its database, job store and artifact folder). ``settings`` is read at
    each use (the learner's time zone, quiz retention, GitHub target may change while the app runs). The
    services less often used are built on first use, on whichever thread asks first."""

    def __init__(
        self,
        db: Database,
        queue: JobStore,
        artifacts: ArtifactStore,
        settings: Callable[[], Settings] = Settings,
        *,
        clock: Callable[[], datetime] = utcnow,
        changelog: ChangeLog | None = None,
        github_token: Callable[[], str | None] = _no_token,
    ) -> None:
        self.db = db
        self.queue = queue
        self.artifacts = artifacts
        self.settings = settings
        self.clock = clock
        self.changelog = changelog
        self.github_token = github_token
        self.scraps = ScrapService(db, queue, settings().capture.max_bytes, changelog=changelog)

    @classmethod
    def of_store(cls, queue: JobStore, settings: Callable[[], Settings] = Settings) -> Services:
        """The services of the library ``queue`` works on, its artifacts beside its database (a headless
        run, a test or a benchmark without the application)."""
        return cls(queue.db, queue, artifact_store(queue.db), settings, clock=queue.clock)

    @cached_property
    def page_reader(self) -> PageReader:
        """Reads the pages of links (``jobs.fetch``) in child processes bounded in time and memory, started on
        the first page and stopped by ``close``."""
        from san_desktop.web.page_reader import PageReader

        return PageReader()

    def close(self) -> None:
        """Stop what the services started outside this process (the page reader's children)."""
        if "page_reader" in self.__dict__:
            self.page_reader.close()

    @cached_property
    def analysis(self) -> CardAnalysis:
        from san_desktop.services.card_analysis import CardAnalysis

        return CardAnalysis(self.db, self.changelog)

    @cached_property
    def til(self) -> TilService:
        from san_desktop.services.til import TilService

        return TilService(
            self.db, self.queue, self.artifacts, lambda: local_zone(self.settings().til.timezone), self.clock
        )

    @cached_property
    def til_runs(self) -> TilRuns:
        from san_desktop.services.til_runs import TilRuns

        return TilRuns(self.db, self.til)

    @cached_property
    def quizzes(self) -> QuizService:
        from san_desktop.services.quizzes import QuizService

        return QuizService(self.db, self.queue, lambda: self.settings().quiz.desired_retention, self.clock)

    @cached_property
    def stars(self) -> StarService:
        from san_desktop.services.stars import StarService

        return StarService(self.db, self.queue, self.clock)

    @cached_property
    def commits(self) -> CommitService:
        from san_desktop.services.commits import CommitService

        return CommitService(self.db, self.queue, self.artifacts, lambda: self.settings().github, self.github_token)

    @cached_property
    def trash(self) -> TrashService:
        from san_desktop.services.trash import TrashService

        return TrashService(self.db, self.queue, lambda: self.settings().trash.keep_days, self.changelog)

    @cached_property
    def card_edits(self) -> CardEditService:
        from san_desktop.services.card_edits import CardEditService

        return CardEditService(self.db, self.queue, self.changelog)
