"""The application facade: the one way in for the window and the command line (Anki's ``Collection``).

Built once at start-up on an open data directory. It holds the database, the settings (``settings_sync``), the
AI provider source, the job queue and the services; no Qt. It is a thin front: each write is a service's, which
says what it changed (``services.changes.Changes``, Anki's ``OpChanges``); the facade hands that on, and ``others``
tells what other processes changed, so one hub in the UI announces every change the same way. The connection
tests of the settings are ``connections``'.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from san_desktop.ai.factory import ProviderSource
from san_desktop.bootstrap import Backend, start_backend
from san_desktop.core.enums import JOB_POOLS, CommitTarget, JobPool, JobType
from san_desktop.core.errors import DatabaseUnreachableError, SanError
from san_desktop.core.ids import new_id
from san_desktop.core.settings import Settings
from san_desktop.db.changes import ChangeLog
from san_desktop.queue.records import BulkResult, JobEvent, JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.services.about import AboutInfo, about
from san_desktop.services.artifact_stores import artifact_store
from san_desktop.services.changes import Changed, Changes, changed
from san_desktop.services.connections import Connections
from san_desktop.services.job_labels import job_labels
from san_desktop.services.other_processes import OtherProcesses
from san_desktop.services.root import Services
from san_desktop.services.scraps import CaptureResult
from san_desktop.services.secrets import GITHUB_TOKEN, ai_api_key, github_token, ways_to_set
from san_desktop.services.settings_sync import SettingsSync
from san_desktop.services.warm_up import query_embedder, warm_up_encoder, warm_up_extractor

if TYPE_CHECKING:  # cards, TIL and commits (numpy and more) load when first used, not for `san scrap add`
    from san_desktop.db.backends.sqlite.integrity import IntegrityCheck
    from san_desktop.queue.monitor import JobMonitor
    from san_desktop.services.card_edits import CardEdit, CardEditResult, CardEditService
    from san_desktop.services.cards import CardService
    from san_desktop.services.commits import CommitInfo, CommitService
    from san_desktop.services.quizzes import QuizService, QuizView
    from san_desktop.services.stars import StarService
    from san_desktop.services.til import TilService
    from san_desktop.services.trash import Emptied, Restored, Trashed, TrashService
    from san_desktop.transfer.anki_export import AnkiExport
    from san_desktop.transfer.backup import BackupSummary
    from san_desktop.transfer.bookmarks_export import BookmarksExport
    from san_desktop.transfer.import_batches import ImportBatches, UndoPreview
    from san_desktop.transfer.importer import Importer, ImportSummary
    from san_desktop.transfer.items import ImportKind, ImportPlan
    from san_desktop.transfer.markdown_export import MarkdownExport
    from san_desktop.web.endpoint import BrowserCapture

__all__ = ["Changed", "Changes", "SanApp", "open_app"]  # (Changes and Changed: the facade's words, made in services)


class SanApp:
    """Scraps, cards, jobs and settings of one data directory. Thread-safe where its parts are: the
    window calls it from background operations, never holding a session across threads."""

    def __init__(self, backend: Backend, *, clock: Callable[[], datetime] | None = None) -> None:
        """``clock``: the database's (a server's time on PostgreSQL) unless given."""
        self.backend = backend
        self.db = backend.db
        self.data_dir = backend.data_dir
        self.clock = clock or self.db.clock
        self.origin = new_id()  # this process's notices are not news to itself
        self.changelog = ChangeLog(self.origin, clock=self.clock)
        # (a command that only reads leaves a library without shared settings as it is)
        self.settings_sync = SettingsSync(self.db, self.data_dir, self.changelog, seed=not backend.reading)
        settings = self.settings_sync.settings  # (``_apply`` keeps the parts below up to date)
        self.providers = ProviderSource(settings.ai, api_key=ai_api_key)
        self.queue = JobStore(self.db, settings.jobs, clock=self.clock)
        self.queue.add_listener(self._on_queue_job)
        self.artifacts = artifact_store(self.db)
        # each service built once, shared with the jobs' processors (``jobs.processors.registry_for``)
        self.services = Services(
            self.db,
            self.queue,
            self.artifacts,
            lambda: self.settings_sync.settings,
            clock=self.clock,
            changelog=self.changelog,
            github_token=github_token,
        )
        self.scraps = self.services.scraps
        self.settings_sync.apply = self._apply
        self.others = OtherProcesses(self.db, self.changelog, self.settings_sync)
        self.connections = Connections()

    # the job monitor and the TIL's listener need the ORM, which a command line capture never loads

    @cached_property
    def jobs(self) -> JobMonitor:
        from san_desktop.queue.monitor import JobMonitor

        return JobMonitor(self.queue)

    @cached_property
    def _til_follows_its_job(self) -> Callable[[JobEvent], None]:
        from san_desktop.services.til_state import TilFollowsItsJob

        return TilFollowsItsJob(self.db)

    def _on_queue_job(self, event: JobEvent) -> None:
        """A TIL whose job was cancelled or failed follows it (``TilFollowsItsJob``)."""
        if event.job.job_type is JobType.TIL_GENERATION:
            self._til_follows_its_job(event)

    @cached_property
    def cards(self) -> CardService:
        from san_desktop.services.cards import CardService

        return CardService(self.db, query_embedder(lambda: self.settings.ai))

    def warm_up_encoder(self) -> str | None:
        return warm_up_encoder(self.settings.ai)

    def warm_up_ai(self) -> str | None:
        """Start the AI provider's child process, when it has one; why it works in this process instead, or None."""
        return self.providers.warm_up()

    @staticmethod
    def warm_up_extractor() -> None:
        warm_up_extractor()

    @property
    def card_edits(self) -> CardEditService:
        return self.services.card_edits

    @property
    def commits(self) -> CommitService:
        return self.services.commits

    @property
    def til(self) -> TilService:
        return self.services.til

    @property
    def quizzes(self) -> QuizService:
        return self.services.quizzes

    @property
    def stars(self) -> StarService:
        return self.services.stars

    @property
    def trash(self) -> TrashService:
        """Every delete goes there, restorable until it is emptied or purged."""
        return self.services.trash

    def close(self) -> None:
        self.providers.close()
        self.services.close()
        self.backend.close()

    def about(self) -> AboutInfo:
        return about(self.db, self.data_dir, self.backend.log_file)

    def job_labels(self, jobs: Iterable[JobRecord]) -> dict[str, str]:
        return job_labels(self.services, jobs)

    def unreachable(self, exc: BaseException) -> DatabaseUnreachableError | None:
        """The library's server out of reach that ``exc`` or one of its causes is, in words; None for anything else."""
        return self.db.unreachable(exc)

    # --- settings (``settings_sync``) ----------------------------------------------------------

    @property
    def settings(self) -> Settings:
        return self.settings_sync.settings

    @property
    def settings_problems(self) -> list[str]:
        return self.settings_sync.problems

    def save_settings(self, settings: Settings, *, overwrite: bool = False) -> Changes:
        return self.settings_sync.save(settings, overwrite=overwrite)

    def reload_settings(self) -> Changes:
        return self.settings_sync.reload()

    def update_settings(self, change: Callable[[Settings], Settings]) -> Changes:
        return self.settings_sync.update(change)

    def set_pool_paused(self, pool: JobPool, paused: bool) -> Changes:
        return self.settings_sync.set_pool_paused(pool, paused)

    def _apply(self, settings: Settings) -> None:
        """New settings, in the parts that keep their own copy."""
        self.providers.update(settings.ai)
        self.queue.settings = settings.jobs
        self.scraps.max_bytes = settings.capture.max_bytes

    def poll_external(self) -> Changes:
        return self.others.poll()

    # --- writes (each returns what it changed) ------------------------------------------------

    def capture_text(self, text: str) -> Changed[CaptureResult]:
        return changed(self.scraps.capture(text))

    def capture_html(self, markup: str, source_ref: str | None = None) -> Changed[CaptureResult]:
        return changed(self.scraps.capture_html(markup, source_ref))

    def capture_url(self, url: str, title: str | None = None) -> Changed[CaptureResult]:
        return changed(self.scraps.capture_url(url, title))

    def capture_from_browser(self, sent: BrowserCapture) -> Changed[CaptureResult]:
        return changed(self.scraps.capture_from_browser(sent))

    def capture_file(self, path: Path) -> Changed[CaptureResult]:
        return changed(self.scraps.capture_file(path))

    def analyse_link_now(self, scrap_id: str) -> Changes:
        return self.scraps.analyse_link_now(scrap_id).changes

    def delete_scrap(self, scrap_id: str) -> Changes:
        """Move a scrap to the Trash with its card and quizzes."""
        return self.trash.delete([scrap_id]).changes

    def delete_scraps(self, scrap_ids: list[str]) -> Changed[Trashed]:
        return changed(self.trash.delete(scrap_ids))

    def restore_scrap(self, scrap_id: str) -> Changes:
        return self.trash.restore_scrap(scrap_id).changes

    def restore_from_trash(self, entry_id: str) -> Changed[Restored]:
        return changed(self.trash.restore(entry_id))

    def empty_trash(self) -> Changed[Emptied]:
        return changed(self.trash.empty())

    def edit_card(self, card_id: str, edit: CardEdit) -> Changed[CardEditResult]:
        return changed(self.card_edits.edit(card_id, edit))

    def rename_tag(self, old: str, new: str) -> Changed[CardEditResult]:
        return changed(self.card_edits.rename_tag(old, new))

    def undo_card_edit(self, result: CardEditResult) -> Changed[CardEditResult]:
        return changed(self.card_edits.undo(result))

    def analyse_card_again(self, card_id: str, *, replace_edits: bool) -> Changed[JobRecord]:
        return Changed.of_job(self.card_edits.analyse_again(card_id, replace_edits=replace_edits))

    def generate_til(self, local_date: str) -> Changed[JobRecord]:
        return Changed.of_job(self.til.generate(local_date))

    def save_til_edit(self, local_date: str, text: str) -> Changed[int]:
        """Save the learner's edit as a new version (the generated one stays)."""
        return self.til.save_edit(local_date, text, self.settings.til.edited_versions_kept)

    def commit_til(
        self,
        local_date: str,
        *,
        target: CommitTarget | None = None,
        path: str | None = None,
        message: str | None = None,
    ) -> Changed[CommitInfo]:
        """Ask for the day's current TIL to be committed (checks first; the GitHub pool does it)."""
        info, job = self.commits.request(local_date, target=target, path=path, message=message)
        return Changed(info, Changes.of_job(job))

    def generate_quizzes(self, local_date: str) -> Changed[JobRecord]:
        """Make (the missing) quizzes of a day's cards; while a generation of the day runs, its job."""
        from san_desktop.services.til import parse_day

        day = parse_day(local_date)
        if not self.til.has_cards(day):
            raise SanError(f"There are no cards from {day}: nothing to make quizzes from.")
        return Changed.of_job(self.quizzes.generate(day))

    def answer_quiz(self, quiz_id: str, rating: int, duration_ms: int | None = None) -> Changed[QuizView]:
        return self.quizzes.answer(quiz_id, rating, duration_ms)

    def suspend_quiz(self, quiz_id: str, suspended: bool = True) -> Changed[QuizView]:
        return self.quizzes.suspend(quiz_id, suspended)

    def edit_quiz(
        self, quiz_id: str, *, question: str, answer: str, accepted: list[str], explanation: str
    ) -> Changed[QuizView]:
        return self.quizzes.edit(quiz_id, question=question, answer=answer, accepted=accepted, explanation=explanation)

    def delete_quiz(self, quiz_id: str) -> Changes:
        return self.quizzes.delete(quiz_id)

    def refresh_stars(self, *, full: bool = False) -> Changed[JobRecord]:
        """Sync the starred repositories of the configured GitHub account, then rank them (jobs)."""
        if not github_token():
            raise SanError(f"No GitHub token to read your stars with: {ways_to_set(GITHUB_TOKEN)}.")
        return Changed.of_job(self.stars.request_sync(self.settings.github.api_url, full=full))

    def set_not_interested(self, repository_id: str, not_interested: bool = True) -> Changes:
        return self.stars.set_not_interested(repository_id, not_interested)

    # --- jobs ---------------------------------------------------------------------------------

    def retry_job(self, job_id: str) -> Changed[JobRecord]:
        return Changed.of_job(self.queue.retry(job_id))

    def cancel_job(self, job_id: str) -> Changed[JobRecord]:
        return Changed.of_job(self.queue.cancel(job_id))

    # (bulk retries and cancels are the job monitor's, ``jobs``: the queue announces each batch as it commits)

    def retry_ai_server_failures(self) -> Changed[BulkResult]:
        """Once the AI settings changed (another server or model, a new key): AI work the old server failed (an
        error answer, no answer in time, none at all) runs again, with one fresh attempt: that is not the new one's."""
        ai_work = [job_type for job_type, pool in JOB_POOLS.items() if pool is JobPool.AI]
        return Changed(self.jobs.retry(self.jobs.failed_by_the_server(ai_work)))

    # --- imports and exports (san_desktop.transfer) ---------------------------------------------

    @cached_property
    def importer(self) -> Importer:
        from san_desktop.transfer.importer import Importer

        return Importer(self.db, self.queue, self.changelog, self.settings.capture.max_bytes)

    @cached_property
    def imports(self) -> ImportBatches:
        """The imports done: which can be undone, and Undo import."""
        from san_desktop.transfer.import_batches import ImportBatches

        return ImportBatches(self.db, self.queue, self.changelog)

    def read_import(
        self, path: Path, kind: ImportKind | None = None, *, cancelled: Callable[[], bool] = lambda: False
    ) -> ImportPlan:
        """What ``path`` holds to import (the preview); its kind is told by its content unless given."""
        from san_desktop.transfer.readers import read_plan

        return read_plan(path, kind, cancelled=cancelled, max_bytes=self.settings.capture.max_bytes)

    def store_import(
        self,
        plan: ImportPlan,
        *,
        dry_run: bool = False,
        cancelled: Callable[[], bool] = lambda: False,
        progress: Callable[[int, int], None] | None = None,
    ) -> Changed[ImportSummary]:
        """Store a preview's items as one batch (each new scrap's card follows in the background)."""
        summary = self.importer.store(plan, dry_run=dry_run, cancelled=cancelled, progress=progress)
        changed = bool(summary.scrap_ids or summary.updated)
        return Changed(summary, Changes(library=changed))  # (pages read what they show again)

    def undo_import_preview(self, batch_id: str) -> UndoPreview:
        return self.imports.undo_preview(batch_id)

    def undo_import(self, batch_id: str) -> Changed[Trashed]:
        trashed = self.imports.undo(batch_id)
        return Changed(trashed, Changes(library=True))  # (what it moved, or the texts it put back)

    def export_anki(
        self, path: Path, *, cards: bool = False, overwrite: bool = False, dry_run: bool = False
    ) -> AnkiExport:
        """The recall quizzes (and with ``cards`` the cards) as an Anki package; replaces only with ``overwrite``."""
        from san_desktop.transfer.anki_export import export_anki

        return export_anki(self.db, Path(path), cards=cards, overwrite=overwrite, dry_run=dry_run)

    def export_markdown(self, folder: Path, *, dry_run: bool = False) -> MarkdownExport:
        from san_desktop.transfer.markdown_export import export_markdown

        return export_markdown(self.db, self.artifacts, Path(folder), self.til.zone, dry_run=dry_run)

    def export_bookmarks(self, path: Path, *, overwrite: bool = False, dry_run: bool = False) -> BookmarksExport:
        """The links as a browser's bookmarks file (``overwrite``, ``dry_run``: as for Anki)."""
        from san_desktop.transfer.bookmarks_export import export_bookmarks

        return export_bookmarks(self.db, Path(path), overwrite=overwrite, dry_run=dry_run)

    def export_backup(self, path: Path, *, overwrite: bool = False) -> BackupSummary:
        """The whole library (database, settings, TIL files) as one zip, while in use (``overwrite``: as above)."""
        from san_desktop.transfer.backup import export_all

        return export_all(self.data_dir, Path(path), overwrite=overwrite)


@contextmanager
def open_app(
    data_dir: str | Path | None,
    *,
    kind: str,
    lock: bool = True,
    log_to_stderr: bool = True,
    verbose: bool = False,
    integrity: IntegrityCheck | None = None,
    reading: bool = False,
) -> Iterator[SanApp]:
    """Open the data directory (migrated, checked) as a facade and close it afterwards. Without
    ``lock`` (command line reads and writes beside an open window) no app session is recorded.
    ``integrity``: the database's check, started before this module was imported (``start_backend``).
    ``reading``: for a command that only reads, which writes nothing of the library (``start_backend``)."""
    backend = start_backend(
        data_dir,
        kind=kind,
        lock=lock,
        log_to_stderr=log_to_stderr,
        verbose=verbose,
        integrity=integrity,
        reading=reading,
    )
    app = SanApp(backend)
    try:
        yield app
    finally:
        app.close()
