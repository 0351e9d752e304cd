"""The tables that capturing a scrap writes, as SQLAlchemy Core ``Table`` objects, and the one ``MetaData``
every table of the app is declared in (the ORM models of ``db.models`` are mapped onto these tables).

Defined here rather than in the models so that `san scrap add` stores a scrap and enqueues its jobs without
loading the ORM (``sqlalchemy.orm``), which costs a command line call more than its work does."""

from __future__ import annotations

import sqlalchemy as sa

from san_desktop.core.enums import ACTIVE_JOB_STATUSES, ErrorKind, JobStatus, JobType, SourceType, TrashKind
from san_desktop.core.ids import new_id
from san_desktop.core.timeutil import utcnow
from san_desktop.db.backends import partial_index
from san_desktop.db.types import UTCDateTime, enum_column_type

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)

ID = sa.String(36)


def id_column() -> sa.Column[str]:
    return sa.Column("id", ID, primary_key=True, default=new_id)


def created_column() -> sa.Column[object]:
    return sa.Column("created_at", UTCDateTime(), nullable=False, default=utcnow)


def updated_column() -> sa.Column[object]:
    return sa.Column("updated_at", UTCDateTime(), nullable=False, default=utcnow, onupdate=utcnow)


def _flag(name: str) -> sa.Column[bool]:
    return sa.Column(name, sa.Boolean(), nullable=False, default=False, server_default=sa.false())


scraps = sa.Table(
    "scraps",
    metadata,
    id_column(),
    sa.Column("source_type", enum_column_type(SourceType, "source_type"), nullable=False),
    sa.Column("source_ref", sa.Text),
    # a link's scrap: its normalised URL until the page is fetched, then the page's readable text
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("raw_content", sa.Text),  # e.g. the HTML a text was taken from
    # sha256 of the content as captured (of a link's scrap: of its normalised URL, kept after the fetch)
    sa.Column("content_hash", sa.String(64), nullable=False),
    sa.Column("title", sa.Text),  # a fetched page's title
    # NULL: not refined yet; "": refined, and refining changed nothing (read ``refined_content or content``)
    sa.Column("refined_content", sa.Text),
    created_column(),
    sa.Column("deleted_at", UTCDateTime()),
    # its page fetch, analysis or refinement failed for good or was cancelled: left for the person to retry
    # (the sweep never re-runs it by itself), whether or not that job's row is still kept (revision 0016)
    _flag("fetch_stopped"),
    _flag("analysis_stopped"),
    _flag("refine_stopped"),
    # the import that brought it in (``import_batches``; Undo import removes exactly those), NULL if captured
    sa.Column("import_batch_id", ID),
    # tags the source gave it (a note's front matter, a bookmark's folders), a JSON list: its card's tags
    sa.Column("given_tags", sa.Text),
    # the card its source gave it (a SAN Markdown export's note: title, summary, category), a JSON object: its
    # first card keeps them as the person's (revision 0029)
    sa.Column("given_card", sa.Text),
    # the entry of the Trash it waits in (``trash_entries``) while ``deleted_at`` is set (revision 0026)
    sa.Column("trash_id", ID),
    # what it is in the source it was imported from (``ImportItem.identity`` with its kind): imported again, it
    # updates this scrap (revision 0029); NULL if captured, or if only its content tells it from others
    sa.Column("import_key", sa.Text),
    # One live scrap per content and source type; a deleted scrap frees its content again.
    partial_index(
        "uq_scraps_source_type_content_hash",
        "source_type",
        "content_hash",
        unique=True,
        where=sa.text("deleted_at IS NULL"),
    ),
    sa.Index("ix_scraps_created_at", "created_at"),
    sa.Index("ix_scraps_import_batch_id", "import_batch_id"),
    sa.Index("ix_scraps_trash_id", "trash_id"),
    sa.Index("ix_scraps_import_key", "import_key"),
)

# The text an import replaced when it brought a changed version of a scrap (revision 0029): undoing that import
# puts it back.
scrap_versions = sa.Table(
    "scrap_versions",
    metadata,
    id_column(),
    sa.Column("scrap_id", ID, sa.ForeignKey("scraps.id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("content_hash", sa.String(64), nullable=False),
    sa.Column("title", sa.Text),
    sa.Column("refined_content", sa.Text),
    sa.Column("given_tags", sa.Text),
    sa.Column("import_batch_id", ID, index=True),  # the import that replaced it
    sa.Column("replaced_at", UTCDateTime(), nullable=False),
)

# What was deleted together (one scrap, several at once, an import undone), restorable as one until it is
# emptied, or purged ``trash.keep_days`` after ``deleted_at`` (revision 0026). Its scraps name it
# (``scraps.trash_id``, without a foreign key, as ``import_batch_id``: a rebuild of ``scraps`` would drop
# its search triggers); cards, quizzes and their reviews stay with their scraps, hidden while they wait.
trash_entries = sa.Table(
    "trash_entries",
    metadata,
    id_column(),
    sa.Column("kind", enum_column_type(TrashKind, "trash_kind"), nullable=False),
    # what a person recognises it by: the scrap's title or text, the first of several, an import's source
    sa.Column("label", sa.Text, nullable=False),
    sa.Column("import_batch_id", ID),  # the import undone (restoring it makes the import undoable again)
    sa.Column("deleted_at", UTCDateTime(), nullable=False),
    sa.Index("ix_trash_entries_deleted_at", "deleted_at"),
)

# One import of a folder or file (revision 0018): what came in, for its summary and for Undo import.
import_batches = sa.Table(
    "import_batches",
    metadata,
    id_column(),
    sa.Column("kind", sa.String(20), nullable=False),  # ``transfer.items.ImportKind``
    sa.Column("source", sa.Text, nullable=False),  # the file or folder named
    sa.Column("imported", sa.Integer, nullable=False, default=0),
    sa.Column("duplicates", sa.Integer, nullable=False, default=0),
    sa.Column("refused", sa.Integer, nullable=False, default=0),
    sa.Column("updated", sa.Integer, nullable=False, default=0, server_default="0"),  # scraps it brought a new text of
    created_column(),
    sa.Column("finished_at", UTCDateTime()),  # NULL: stopped part way (cancelled, or the app was killed)
    sa.Column("undone_at", UTCDateTime()),
)

knowledge_cards = sa.Table(
    "knowledge_cards",
    metadata,
    id_column(),
    sa.Column("scrap_id", ID, sa.ForeignKey("scraps.id", ondelete="CASCADE"), nullable=False, unique=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("summary", sa.Text, nullable=False),
    sa.Column("category_id", ID, sa.ForeignKey("categories.id", ondelete="SET NULL"), index=True),
    sa.Column("embedding_model", sa.String(200)),
    # fields the person corrected (``services.card_edits``): analysing the card again keeps them unless asked
    _flag("title_edited"),
    _flag("summary_edited"),
    _flag("tags_edited"),
    _flag("category_edited"),
    created_column(),
    # the last change of what the card says (title, summary, tags, category): a day's TIL inputs; a new
    # vector alone leaves it
    updated_column(),
)

_ACTIVE = sa.text("status IN (" + ", ".join(f"'{status.value}'" for status in ACTIVE_JOB_STATUSES) + ")")

# The job queue and its record. ``target_id`` has no foreign key: its meaning depends on the type.
async_jobs = sa.Table(
    "async_jobs",
    metadata,
    id_column(),
    sa.Column("job_type", enum_column_type(JobType, "job_type"), nullable=False),
    sa.Column("target_id", ID, nullable=False),
    sa.Column("status", enum_column_type(JobStatus, "status"), nullable=False, default=JobStatus.PENDING),
    sa.Column("payload", sa.Text),  # small JSON parameters, if a type needs any
    sa.Column("error_message", sa.String(1000)),
    sa.Column("error_kind", enum_column_type(ErrorKind, "error_kind")),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("max_attempts", sa.Integer, nullable=False, default=3),
    sa.Column("run_after", UTCDateTime()),
    sa.Column("owner_session", ID, sa.ForeignKey("app_sessions.id", ondelete="SET NULL")),
    sa.Column("lease_until", UTCDateTime()),
    sa.Column("run_id", ID),  # the current (or last) attempt's run: its files carry it
    created_column(),
    updated_column(),
    sa.Column("started_at", UTCDateTime()),  # when the current attempt started: thresholds count from here
    sa.Column("finished_at", UTCDateTime()),
    # At most one job that will still run per (target, type); finished jobs may pile up freely.
    partial_index("uq_async_jobs_active_target_job_type", "target_id", "job_type", unique=True, where=_ACTIVE),
    # claim order: the oldest runnable job first (ids are time-ordered UUIDv7)
    sa.Index("ix_async_jobs_status_id", "status", "id"),
    sa.Index("ix_async_jobs_target_id", "target_id"),
    sa.Index("ix_async_jobs_updated_at", "updated_at"),
    sa.CheckConstraint("attempts >= 0", name="attempts_non_negative"),
    sa.CheckConstraint("max_attempts >= 1", name="max_attempts_positive"),
)

# What a process changed (a scrap captured, deleted or restored...), so that another open window can show
# it within a poll: ids grow in commit order, readers ask for those above the last they saw. Rows older
# than a day are pruned by the recovery sweep.
change_notices = sa.Table(
    "change_notices",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("origin", sa.String(36), nullable=False),  # the writing process's facade, to skip its own
    sa.Column("kind", sa.String(20), nullable=False),  # "scrap", "card", ...
    sa.Column("item_id", ID, nullable=False),
    created_column(),
    sa.Index("ix_change_notices_created_at", "created_at"),
)
