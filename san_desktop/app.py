"""The application facade: the one way in for the window and the command line (Anki's ``Collection``).

Built once at start-up on an open data directory. It holds the database, the settings, the AI provider
source, the job queue and the services; no Qt. Writes return what they changed (``Changes``), and
``poll_external`` tells what other processes changed (the command line beside an open window), so one
hub in the UI can announce every change the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from san_desktop import __version__
from san_desktop.ai.factory import ProviderSource, embedding_model_of
from san_desktop.bootstrap import Backend, start_backend
from san_desktop.core.enums import (
    JOB_POOLS,
    JOB_TARGETS,
    CommitTarget,
    JobPool,
    JobStatus,
    JobTarget,
    JobType,
    SourceType,
    job_types_on,
)
from san_desktop.core.errors import DatabaseUnreachableError, PermanentError, SanError, TransientError
from san_desktop.core.ids import new_id
from san_desktop.core.settings import (
    SETTINGS_FILE,
    AISettings,
    GitHubSettings,
    Settings,
    load_settings_checked,
    save_settings,
    shared_values,
    with_shared,
    with_value,
)
from san_desktop.db.changes import CARD_NOTICE, ChangeLog
from san_desktop.db.database import CHANGES_CHANNEL, Notified
from san_desktop.queue.job_queue import JobQueue
from san_desktop.queue.records import BulkResult, JobEvent, JobRecord
from san_desktop.services.artifact_stores import artifact_store
from san_desktop.services.root import Services
from san_desktop.services.scraps import SCRAP_NOTICE, CaptureResult
from san_desktop.services.secrets import (
    AI_API_KEY,
    GITHUB_TOKEN,
    ai_api_key,
    github_token,
    secret_with_source,
    set_secret,
    ways_to_set,
)

if TYPE_CHECKING:  # cards, TIL and commits (numpy and more) load when first used, not for `san scrap add`
    from san_desktop.db.backends.sqlite.integrity import IntegrityCheck
    from san_desktop.queue.monitor import JobFilter, JobMonitor
    from san_desktop.services.card_edits import CardEdit, CardEditResult, CardEditService
    from san_desktop.services.cards import CardService
    from san_desktop.services.commits import CommitInfo, CommitService
    from san_desktop.services.quizzes import QuizService, QuizView
    from san_desktop.services.search import QueryVector
    from san_desktop.services.stars import StarService
    from san_desktop.services.til import TilService
    from san_desktop.services.trash import Emptied, Restored, Trashed, TrashService
    from san_desktop.transfer.anki_export import AnkiExport
    from san_desktop.transfer.backup import BackupSummary
    from san_desktop.transfer.importer import Importer, ImportSummary, UndoPreview
    from san_desktop.transfer.items import ImportKind, ImportPlan
    from san_desktop.transfer.markdown_export import MarkdownExport
    from san_desktop.web.endpoint import BrowserCapture

log = logging.getLogger(__name__)

T = TypeVar("T")
# a job of these types changed: the scrap it works on (its row in the Inbox) changed too
SCRAP_JOB_TYPES = job_types_on(JobTarget.SCRAP)
# jobs whose target has a name a person knows (``SanApp.job_labels``): all of them
LABELLED_JOB_TYPES = frozenset(JOB_TARGETS)
# more scraps than this changed by another process in one poll: told as the whole library changed
MANY_CHANGED = 200


class SettingsConflictError(SanError):
    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} was changed by another program (perhaps `san config set`) since these settings were "
            "loaded. Look at the settings again, or save once more to overwrite them."
        )


@dataclass(frozen=True)
class Changes:
    """What a write (or another process) changed; pages refresh exactly that."""

    scraps: frozenset[str] = frozenset()  # scraps added, changed or deleted (their Inbox rows)
    cards_of_scraps: frozenset[str] = frozenset()  # scraps whose card was made or re-made
    jobs: tuple[JobRecord, ...] = ()  # newest state of each changed job
    tils: frozenset[str] = frozenset()  # days whose TIL text changed (an edit saved)
    quizzes: bool = False  # quizzes answered, edited, suspended or deleted (made ones come as their job)
    stars: bool = False  # a starred repository hidden or shown again (new rankings come as their job)
    settings: bool = False
    ai_settings_changed: bool = False  # the AI server or models: paused AI work may run again
    embedding_model_changed: bool = False
    external: bool = False  # (some of it) made by another process
    # so many scraps came or went at once (an import, its undo) that pages read what they show again,
    # rather than thousands of rows one by one
    library: bool = False

    def __or__(self, other: Changes) -> Changes:
        return Changes.merge((self, other))

    @property
    def new_scrap_jobs(self) -> frozenset[str]:
        """Scraps whose job was just made (PENDING, never tried): an import's or a capture's. The scrap itself
        is told by whoever made it (the capture's own change, another process's notice, an import's end):
        a page need not read a scrap it does not show for this (one whose other jobs moved on, it does)."""
        fresh: set[str] = set()
        moved: set[str] = set()
        for job in self.jobs:
            if job.job_type in SCRAP_JOB_TYPES:
                new = job.status is JobStatus.PENDING and job.attempts == 0
                (fresh if new else moved).add(job.target_id)
        return frozenset(fresh - moved)

    @staticmethod
    def merge(items: Iterable[Changes]) -> Changes:
        """All of ``items`` in one (each job in its newest state), in one pass: merging them two by two
        copied every job gathered so far again: quadratic in the events, and a bulk retry sends thousands."""
        listed = list(items)
        return Changes(
            scraps=frozenset().union(*(item.scraps for item in listed)),
            cards_of_scraps=frozenset().union(*(item.cards_of_scraps for item in listed)),
            jobs=tuple({job.id: job for item in listed for job in item.jobs}.values()),
            tils=frozenset().union(*(item.tils for item in listed)),
            settings=any(item.settings for item in listed),
            ai_settings_changed=any(item.ai_settings_changed for item in listed),
            embedding_model_changed=any(item.embedding_model_changed for item in listed),
            external=any(item.external for item in listed),
            quizzes=any(item.quizzes for item in listed),
            stars=any(item.stars for item in listed),
            library=any(item.library for item in listed),
        )

    def __bool__(self) -> bool:
        return bool(
            self.scraps
            or self.cards_of_scraps
            or self.jobs
            or self.settings
            or self.tils
            or self.quizzes
            or self.stars
            or self.library
        )

    @staticmethod
    def of_job(job: JobRecord, *, external: bool = False) -> Changes:
        scraps = frozenset({job.target_id}) if job.job_type in SCRAP_JOB_TYPES else frozenset()
        made = job.job_type is JobType.CARD_ANALYSIS and job.status is JobStatus.COMPLETED
        return Changes(scraps=scraps, cards_of_scraps=scraps if made else frozenset(), jobs=(job,), external=external)


@dataclass(frozen=True)
class Changed(Generic[T]):
    """A write's result and what it changed."""

    value: T
    changes: Changes = field(default_factory=Changes)


@dataclass(frozen=True)
class AboutInfo:
    version: str
    data_dir: Path
    database: str  # the file, or the server's database as people name it
    on_server: bool  # the library is on a PostgreSQL server
    schema_revision: str
    log_file: Path
    runs_on: str  # "SQLite 3.50.4 (sqlite3)", "PostgreSQL 18.3"
    created: bool  # the database was made by this start
    upgraded_from: str | None  # the schema revision it was upgraded from by this start
    backup: Path | None
    embedded_model: str = ""  # the shipped sentence encoder, its license, and whether it is in use


def _embedded_model() -> str:
    from san_desktop.ai import encoder

    said = encoder.described()
    return said if encoder.usable() else f"{said}: not loaded (similar cards compare words and spelling)"


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    return (info.st_mtime_ns, info.st_size)


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
        settings, self.settings_problems = load_settings_checked(self.data_dir)
        for problem in self.settings_problems:
            log.warning("settings.json: %s", problem)
        # (a command that only reads leaves a library without shared settings as it is)
        settings = self._with_library_settings(settings, seed=not backend.reading)
        self._settings = settings
        self._settings_stamp = _stamp(self.settings_path)
        self._writing: Settings | None = None  # being saved by this app: a poll meanwhile is not news
        self.providers = ProviderSource(settings.ai, api_key=ai_api_key)
        self.queue = JobQueue(self.db, settings.jobs, clock=self.clock)
        self.queue.add_listener(self._on_queue_job)
        self.artifacts = artifact_store(self.db)
        # each service built once, shared with the jobs' processors (``jobs.processors.registry_for``)
        self.services = Services(
            self.db,
            self.queue,
            self.artifacts,
            lambda: self._settings,
            clock=self.clock,
            changelog=self.changelog,
            github_token=self.github_token,
        )
        self.scraps = self.services.scraps
        with self.db.engine.connect() as connection:
            self._notice_cursor = self.changelog.newest_id(connection)

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

        return CardService(self.db, self._embed_query)

    def _embed_query(self, text: str) -> QueryVector | None:
        """A search's vector, when the embedded sentence encoder is what embeds the cards (a query to a
        remote server would make every keystroke wait on the network: those search by words)."""
        if self.settings.ai.provider != "local":
            return None
        from san_desktop.ai import encoder
        from san_desktop.services.search import QueryVector

        if not encoder.usable():
            return None
        try:
            return QueryVector(encoder.SEMANTIC_EMBEDDING_MODEL, encoder.encode([text])[0])
        except encoder.EncoderUnavailableError:
            return None

    def warm_up_encoder(self) -> str | None:
        """Load the embedded sentence encoder now when the embedded AI is chosen (off the GUI thread,
        before the first card needs it); the sentence that says why it could not load, or None."""
        if self.settings.ai.provider != "local":
            return None
        from san_desktop.ai import encoder

        return None if encoder.warm_up() else encoder.failure()

    def warm_up_ai(self) -> str | None:
        """Start the AI provider's child process, when it has one (off the GUI thread); why it works in the
        window's process instead, or None."""
        return self.providers.warm_up()

    def warm_up_extractor(self) -> None:
        """Load the article extractor now (off the GUI thread), not when the first page arrives."""
        from san_desktop.web import extract

        extract.warm_up()

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
    def settings_path(self) -> Path:
        return self.data_dir / SETTINGS_FILE

    @property
    def settings(self) -> Settings:
        return self._settings

    def close(self) -> None:
        self.providers.close()
        self.services.close()
        self.backend.close()

    def about(self) -> AboutInfo:
        migration = self.db.migration
        return AboutInfo(
            version=__version__,
            data_dir=self.data_dir,
            database=str(self.db.where),
            on_server=self.db.shares_library,
            schema_revision=migration.head,
            log_file=self.backend.log_file,
            runs_on=self.db.runs_on,
            created=migration.previous is None,
            upgraded_from=migration.previous if migration.upgraded else None,
            backup=migration.backup,
            embedded_model=_embedded_model(),
        )

    def job_labels(self, jobs: Iterable[JobRecord]) -> dict[str, str]:
        """A human label per job target: a scrap's card title (or the start of its text), a day's TIL, a
        commit's day and repository, a day's quizzes, the GitHub stars."""
        targets: dict[JobTarget, set[str]] = {}
        for job in jobs:
            targets.setdefault(JOB_TARGETS[job.job_type], set()).add(job.target_id)
        labels: dict[str, str] = {}
        if scraps := targets.get(JobTarget.SCRAP):
            labels.update(self.scraps.labels(sorted(scraps)))
        if summaries := targets.get(JobTarget.DAY):
            labels.update(self.til.labels(sorted(summaries)))
        if commits := targets.get(JobTarget.COMMIT):
            labels.update(self.commits.labels(sorted(commits)))
        if generations := targets.get(JobTarget.QUIZ_GENERATION):
            labels.update(self.quizzes.labels(sorted(generations)))
        labels.update((account, "Your GitHub stars") for account in targets.get(JobTarget.ACCOUNT, ()))
        return labels

    # --- writes (each returns what it changed) ------------------------------------------------

    def _captured(self, result: CaptureResult) -> Changed[CaptureResult]:
        return Changed(result, Changes(scraps=frozenset({result.scrap_id})))

    def capture_text(self, text: str) -> Changed[CaptureResult]:
        return self._captured(self.scraps.capture(text))

    def capture_html(self, markup: str, source_ref: str | None = None) -> Changed[CaptureResult]:
        return self._captured(self.scraps.capture_html(markup, source_ref))

    def capture_url(self, url: str, title: str | None = None) -> Changed[CaptureResult]:
        return self._captured(self.scraps.capture_url(url, title))

    def capture_from_browser(self, sent: BrowserCapture) -> Changed[CaptureResult]:
        """What the browser extension sent: a page as the reader saw it (its article, which the endpoint read
        from the DOM it sent out of this process: no download), a selection (text, its page as the source), or
        a link (fetched as any link)."""
        if sent.kind == "link":
            return self.capture_url(sent.url, sent.title)
        if sent.kind == "page" and sent.text is not None:
            return self._captured(self.scraps.capture_page(sent.url, sent.title, sent.text))
        if not (sent.selection or "").strip():
            raise SanError("Nothing to scrap: no text is selected on the page.")
        return self._captured(self.scraps.capture(sent.selection or "", SourceType.TEXT, sent.url))

    def capture_file(self, path: Path) -> Changed[CaptureResult]:
        return self._captured(self.scraps.capture_file(path))

    def analyse_link_now(self, scrap_id: str) -> Changes:
        """A link's card from its address and title alone (its page could not be fetched)."""
        self.scraps.analyse_link_now(scrap_id)
        return Changes(scraps=frozenset({scrap_id}))

    # --- the Trash (services.trash): every delete goes there, restorable until it is emptied or purged ----

    @property
    def trash(self) -> TrashService:
        return self.services.trash

    def delete_scrap(self, scrap_id: str) -> Changes:
        """Move a scrap to the Trash with its card and quizzes."""
        return self.delete_scraps([scrap_id]).changes

    def delete_scraps(self, scrap_ids: list[str]) -> Changed[Trashed]:
        """Move scraps to the Trash as one entry (restored as one)."""
        trashed = self.trash.delete(scrap_ids)
        return Changed(trashed, _scraps_changed(trashed.scrap_ids))

    def restore_scrap(self, scrap_id: str) -> Changes:
        """Bring one scrap back from the Trash."""
        restored = self.trash.restore_scrap(scrap_id)
        return Changes(scraps=frozenset(restored.scrap_ids))

    def restore_from_trash(self, entry_id: str) -> Changed[Restored]:
        """Bring back what one entry of the Trash holds (an import undone: all its scraps, and the import can
        be undone again)."""
        restored = self.trash.restore(entry_id)
        return Changed(restored, _scraps_changed(restored.scrap_ids))

    def empty_trash(self) -> Changed[Emptied]:
        """Delete everything in the Trash for good."""
        emptied = self.trash.empty()
        return Changed(emptied, _scraps_changed(emptied.scrap_ids))

    # --- imports (transfer.readers, transfer.importer) -----------------------------------------

    @cached_property
    def importer(self) -> Importer:
        from san_desktop.transfer.importer import Importer

        return Importer(self.db, self.queue, self.changelog, self._settings.capture.max_bytes)

    def read_import(
        self, path: Path, kind: ImportKind | None = None, *, cancelled: Callable[[], bool] = lambda: False
    ) -> ImportPlan:
        """What ``path`` holds to import (the preview); its kind is told by its content unless given."""
        from san_desktop.transfer.readers import read_plan

        return read_plan(path, kind, cancelled=cancelled, max_bytes=self._settings.capture.max_bytes)

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
        return Changed(summary, Changes(library=bool(summary.scrap_ids)))

    def undo_import_preview(self, batch_id: str) -> UndoPreview:
        """What Undo import would move to the Trash, and how much of it was edited since (nothing is written)."""
        return self.importer.undo_preview(batch_id)

    def undo_import(self, batch_id: str) -> Changed[Trashed]:
        """Move exactly what an import brought in to the Trash, as one entry that restores it all."""
        trashed = self.importer.undo(batch_id)
        return Changed(trashed, Changes(library=bool(trashed.scrap_ids)))

    # --- correcting cards (services.card_edits) --------------------------------------------------

    def edit_card(self, card_id: str, edit: CardEdit) -> Changed[CardEditResult]:
        """Correct a card: the fields changed are the person's from now on; a new title or summary gets a
        new vector from a job."""
        return _cards_edited(self.card_edits.edit(card_id, edit))

    def rename_tag(self, old: str, new: str) -> Changed[CardEditResult]:
        """Rename a tag on every card that has it (merged into a tag called ``new`` if there is one)."""
        return _cards_edited(self.card_edits.rename_tag(old, new))

    def undo_card_edit(self, result: CardEditResult) -> Changed[CardEditResult]:
        return _cards_edited(self.card_edits.undo(result))

    def analyse_card_again(self, card_id: str, *, replace_edits: bool) -> Changed[JobRecord]:
        """Analyse a card again; the fields the person edited are kept unless ``replace_edits``."""
        job = self.card_edits.analyse_again(card_id, replace_edits=replace_edits)
        return Changed(job, Changes.of_job(job))

    def retry_job(self, job_id: str) -> Changed[JobRecord]:
        job = self.queue.retry(job_id)
        return Changed(job, Changes.of_job(job))

    def cancel_job(self, job_id: str) -> Changed[JobRecord]:
        job = self.queue.cancel(job_id)
        return Changed(job, Changes.of_job(job))

    # Bulk actions change thousands of jobs: each batch is announced to the queue's listeners once it
    # committed (the window's runner passes them on a slice at a time), so they are not repeated here.
    Progress = Callable[[int], None]

    def retry_jobs(self, job_ids: list[str], progress: Progress | None = None) -> Changed[BulkResult]:
        return Changed(self.jobs.retry(job_ids, progress))

    def retry_matching(self, where: JobFilter, progress: Progress | None = None) -> Changed[BulkResult]:
        """Queue again every failed or cancelled job ``where`` matches."""
        return Changed(self.jobs.retry_matching(where, progress))

    def retry_failure_group(self, signature: str, progress: Progress | None = None) -> Changed[BulkResult]:
        return Changed(self.jobs.retry_group(signature, progress))

    def retry_ai_server_failures(self) -> Changed[BulkResult]:
        """Once the AI settings changed (another server or model, a new key): AI work that failed because the
        server did (an error answer, no answer in time, none at all) runs again, with one fresh attempt, as the
        runner lets waiting AI work run at once. What the old server failed is not the state of the new one."""
        ai_work = [job_type for job_type, pool in JOB_POOLS.items() if pool is JobPool.AI]
        return Changed(self.jobs.retry(self.jobs.failed_by_the_server(ai_work)))

    def cancel_jobs(self, job_ids: list[str], progress: Progress | None = None) -> Changed[BulkResult]:
        return Changed(self.jobs.cancel(job_ids, progress))

    def cancel_matching(self, where: JobFilter, progress: Progress | None = None) -> Changed[BulkResult]:
        """Cancel every waiting or running job ``where`` matches."""
        return Changed(self.jobs.cancel_matching(where, progress))

    def set_pool_paused(self, pool: JobPool, paused: bool) -> Changes:
        """Pause or resume a pool, remembered in the settings (another program's edits are taken up first)."""
        changes = self.reload_settings()
        return changes | self.save_settings(
            with_value(self._settings, "jobs", self._settings.jobs.pause_key(pool), paused)
        )

    def generate_til(self, local_date: str) -> Changed[JobRecord]:
        """Generate (or resume) a day's TIL; while one runs, its job is returned instead of a second."""
        job = self.til.generate(local_date)
        return Changed(job, Changes.of_job(job))

    def generate_quizzes(self, local_date: str) -> Changed[JobRecord]:
        """Make (the missing) quizzes of a day's cards; while a generation of the day runs, its job."""
        from san_desktop.services.til import parse_day

        day = parse_day(local_date)
        if not self.til.has_cards(day):
            raise SanError(f"There are no cards from {day}: nothing to make quizzes from.")
        job = self.quizzes.generate(day)
        return Changed(job, Changes.of_job(job))

    def answer_quiz(self, quiz_id: str, rating: int, duration_ms: int | None = None) -> Changed[QuizView]:
        return Changed(self.quizzes.answer(quiz_id, rating, duration_ms), Changes(quizzes=True))

    def suspend_quiz(self, quiz_id: str, suspended: bool = True) -> Changed[QuizView]:
        return Changed(self.quizzes.suspend(quiz_id, suspended), Changes(quizzes=True))

    def edit_quiz(
        self, quiz_id: str, *, question: str, answer: str, accepted: list[str], explanation: str
    ) -> Changed[QuizView]:
        view = self.quizzes.edit(quiz_id, question=question, answer=answer, accepted=accepted, explanation=explanation)
        return Changed(view, Changes(quizzes=True))

    def delete_quiz(self, quiz_id: str) -> Changes:
        self.quizzes.delete(quiz_id)
        return Changes(quizzes=True)

    # --- exports (san_desktop.transfer; reads only, on the caller's thread) ------------------------

    def export_anki(
        self, path: Path, *, cards: bool = False, overwrite: bool = False, dry_run: bool = False
    ) -> AnkiExport:
        """The recall quizzes (and with ``cards`` the cards) as an Anki package at ``path``; an existing file
        is replaced only with ``overwrite``."""
        from san_desktop.transfer.anki_export import export_anki

        return export_anki(self.db, Path(path), cards=cards, overwrite=overwrite, dry_run=dry_run)

    def export_markdown(self, folder: Path, *, dry_run: bool = False) -> MarkdownExport:
        """The cards and TIL notes as Markdown files in ``folder`` (updated, never duplicated, if exported
        there before)."""
        from san_desktop.transfer.markdown_export import export_markdown

        return export_markdown(self.db, self.artifacts, Path(folder), self.til.zone, dry_run=dry_run)

    def export_backup(self, path: Path, *, overwrite: bool = False) -> BackupSummary:
        """The whole library (database, settings, TIL files) as one zip at ``path``, while it is in use; an
        existing file is replaced only with ``overwrite``."""
        from san_desktop.transfer.backup import export_all

        return export_all(self.data_dir, Path(path), overwrite=overwrite)

    def refresh_stars(self, *, full: bool = False) -> Changed[JobRecord]:
        """Sync the starred repositories of the configured GitHub account, then rank them (jobs)."""
        if not github_token():
            raise SanError(f"No GitHub token to read your stars with: {ways_to_set(GITHUB_TOKEN)}.")
        job = self.stars.request_sync(self._settings.github.api_url, full=full)
        return Changed(job, Changes.of_job(job))

    def set_not_interested(self, repository_id: str, not_interested: bool = True) -> Changes:
        """Hide a repository from this and future recommendations (or show it again)."""
        self.stars.set_not_interested(repository_id, not_interested)
        return Changes(stars=True)

    def save_til_edit(self, local_date: str, text: str) -> Changed[int]:
        """Save the learner's edit as a new version (the generated one stays)."""
        version = self.til.save_edit(local_date, text, self._settings.til.edited_versions_kept)
        return Changed(version, Changes(tils=frozenset({local_date})))

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

    @staticmethod
    def github_token() -> str | None:
        return github_token()

    @staticmethod
    def github_token_source() -> str:
        """Where the token comes from: "keyring", GH_TOKEN / GITHUB_TOKEN, or "none"."""
        return secret_with_source(GITHUB_TOKEN)[1]

    def test_github(self, settings: GitHubSettings, token: str | None = None) -> str:
        """Check the token (GET /user), push permission on the repository and its branch; a sentence
        saying what works, or SanError saying exactly what is wrong."""
        token = token or github_token()
        if not token:
            raise SanError(f"No GitHub token: {ways_to_set(GITHUB_TOKEN)}.")
        if not settings.repository:
            raise SanError("No repository is set: give it as owner/name.")
        from san_desktop.github.client import GitHubClient

        try:
            with GitHubClient(settings.api_url, token) as client:
                login = client.user()
                if not client.can_push(settings.repository):
                    raise SanError(
                        f"The token of {login} cannot push to {settings.repository}: give it Contents write."
                    )
                if not client.branch_exists(settings.repository, settings.branch):
                    raise SanError(f"The branch {settings.branch} does not exist in {settings.repository}.")
        except (PermanentError, TransientError) as exc:
            raise SanError(str(exc)) from exc
        return f"{login} can push to {settings.repository} ({settings.branch})."

    @staticmethod
    def test_local_repository(settings: GitHubSettings, setting: str = "github.local_repository") -> str:
        """Whether the local repository of ``settings`` takes commits; SanError naming ``setting`` if not."""
        from san_desktop.github.local_git import repository_problem

        if (problem := repository_problem(settings.local_repository, setting)) is not None:
            raise SanError(problem)
        return f"{settings.local_repository} takes TIL commits on the branch {settings.local_branch}."

    @staticmethod
    def set_github_token(token: str) -> None:
        set_secret(GITHUB_TOKEN, token)

    # --- settings -----------------------------------------------------------------------------

    def save_settings(self, settings: Settings, *, overwrite: bool = False) -> Changes:
        """Write and apply ``settings``. Refuses (``SettingsConflictError``) to silently overwrite a file
        another process changed since it was loaded, unless ``overwrite``."""
        if not overwrite and _stamp(self.settings_path) != self._settings_stamp:
            raise SettingsConflictError(self.settings_path)
        self._writing = settings  # (the data folder's watcher may poll before this returns)
        try:
            if self.db.shares_library and shared_values(settings) != shared_values(self._settings):
                from san_desktop.services.library_settings import write_shared

                write_shared(self.db, settings, self.changelog)
            save_settings(self.data_dir, settings)
            self._settings_stamp = _stamp(self.settings_path)
        finally:
            self._writing = None
        return self._apply(settings)

    def _with_library_settings(self, settings: Settings, *, seed: bool = False) -> Settings:
        """``settings`` with the values a library on a server keeps for all its machines; with ``seed``, the
        first machine's own values become the library's when it keeps none yet. A SQLite library's are its
        file's."""
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

    def reload_settings(self) -> Changes:
        """Take up ``settings.json`` if another process changed it, and (a library on a server) the library's
        shared settings if another machine changed them; no changes otherwise."""
        stamp = _stamp(self.settings_path)
        if stamp == self._settings_stamp:
            if not self.db.shares_library:
                return Changes()
            merged = self._with_library_settings(self._settings)
            if merged == self._settings or merged == self._writing:
                return Changes()
            return replace(self._apply(merged), external=True)
        settings, problems = load_settings_checked(self.data_dir)
        settings = self._with_library_settings(settings)
        if stamp == self._settings_stamp or settings == self._writing:
            return Changes()  # this app's own write, seen while it was being saved
        self.settings_problems = problems
        self._settings_stamp = stamp
        return replace(self._apply(settings), external=True)

    def _apply(self, settings: Settings) -> Changes:
        old = self._settings
        embedding_changed = embedding_model_of(old.ai) != embedding_model_of(settings.ai)
        self.providers.update(settings.ai)
        self.queue.settings = settings.jobs
        self.scraps.max_bytes = settings.capture.max_bytes
        # last: whoever sees the new settings (another thread) finds them in use already
        self._settings = settings
        return Changes(
            settings=settings != old,
            ai_settings_changed=settings.ai != old.ai,
            embedding_model_changed=embedding_changed,
        )

    @staticmethod
    def ai_key_source() -> str:
        """Where the API key comes from: "keyring", OPENAI_API_KEY, or "none"."""
        return secret_with_source(AI_API_KEY)[1]

    def set_ai_key(self, key: str) -> None:
        set_secret(AI_API_KEY, key)

    def test_ai(self, settings: AISettings, api_key: str | None = None) -> str:
        """Ask the OpenAI-compatible server of ``settings`` for an embedding and a card (with ``api_key``,
        or the stored one); what answered, or an exception saying what failed."""
        from san_desktop.ai.openai_compat import OpenAICompatibleProvider, OpenAISettings

        provider = OpenAICompatibleProvider(
            OpenAISettings(
                settings.base_url,
                settings.chat_model,
                settings.embedding_model,
                api_key or ai_api_key(),
                settings.timeout_seconds,
                temperature=settings.temperature,
            )
        )
        try:
            return provider.test_connection()
        finally:
            provider.close()

    # --- other processes ----------------------------------------------------------------------

    def watch_external(self, callback: Notified) -> bool:
        """Call ``callback`` (from another thread) when another process or machine wrote change notices:
        ``poll_external`` has news then. False when nothing will call (a SQLite library: poll)."""
        return self.db.listen(CHANGES_CHANNEL, callback)

    def unwatch_external(self, callback: Notified) -> None:
        self.db.unlisten(CHANGES_CHANNEL, callback)

    @property
    def external_told(self) -> bool:
        """Whether other processes' change notices are being told now (``watch_external``' calls come)."""
        return self.db.notified

    def unreachable(self, exc: BaseException) -> DatabaseUnreachableError | None:
        """The library's server out of reach (down, restarting, the network cut) that ``exc`` or one of its causes
        is, in words; None for anything else (a SQLite file is never away)."""
        return self.db.unreachable(exc)

    def poll_external(self) -> Changes:
        """What other processes changed since the last poll: scraps (from their notices) and settings."""
        with self.db.sessions() as session:
            self._notice_cursor, notices = self.changelog.since(session, self._notice_cursor)
        scraps = frozenset(item for kind, item in notices if kind == SCRAP_NOTICE)
        cards = frozenset(item for kind, item in notices if kind == CARD_NOTICE)  # their scraps
        if len(scraps | cards) > MANY_CHANGED:  # an import beside the window: pages read what they show again
            return Changes(library=True, external=True) | self.reload_settings()
        changes = Changes(scraps=scraps | cards, cards_of_scraps=cards, external=bool(scraps or cards))
        return changes | self.reload_settings()


def _scraps_changed(scrap_ids: Iterable[str]) -> Changes:
    """Scraps deleted or restored: told one by one when they are a few, as the whole library when many."""
    ids = frozenset(scrap_ids)
    return Changes(library=True) if len(ids) > MANY_CHANGED else Changes(scraps=ids)


def _cards_edited(result: CardEditResult) -> Changed[CardEditResult]:
    scraps = result.scrap_ids
    return Changed(result, Changes(scraps=scraps, cards_of_scraps=scraps, jobs=result.jobs))


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
