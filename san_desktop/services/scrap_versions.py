"""The texts an import replaced (``scrap_versions``, revision 0029): kept when an import brings a new text of a scrap
an earlier import made, and put back when that import is undone."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from san_desktop.core.enums import JobType
from san_desktop.core.ids import new_id
from san_desktop.db.tables import scrap_versions, scraps
from san_desktop.queue.store import JobStore


def keep_version(conn: sa.Connection, scrap_id: str, batch_id: str, now: datetime) -> None:
    """Keep the scrap's text, title and tags as they are, before the import ``batch_id`` replaces them."""
    old = conn.execute(
        sa.select(
            scraps.c.content, scraps.c.content_hash, scraps.c.title, scraps.c.refined_content, scraps.c.given_tags
        ).where(scraps.c.id == scrap_id)
    ).one()
    conn.execute(
        sa.insert(scrap_versions).values(
            id=new_id(),
            scrap_id=scrap_id,
            content=old.content,
            content_hash=old.content_hash,
            title=old.title,
            refined_content=old.refined_content,
            given_tags=old.given_tags,
            import_batch_id=batch_id,
            replaced_at=now,
        )
    )


def analyse_again(conn: sa.Connection, queue: JobStore, scrap_id: str) -> None:
    for job_type in (JobType.CARD_ANALYSIS, JobType.SCRAP_REFINE):
        queue.active_or_enqueue(conn, job_type, scrap_id)


def put_back(conn: sa.Connection, queue: JobStore, batch_id: str) -> list[str]:
    """Undo import of what ``batch_id`` updated: each live scrap gets back the text it had before (the version this
    import kept of it), and its card is analysed again. The ids of the scraps put back."""
    version = scrap_versions.c
    kept = conn.execute(
        sa.select(
            version.scrap_id,
            scraps.c.source_type,
            version.content,
            version.content_hash,
            version.title,
            version.refined_content,
            version.given_tags,
        )
        .join(scraps, scraps.c.id == version.scrap_id)
        .where(version.import_batch_id == batch_id, scraps.c.deleted_at.is_(None))
        .order_by(version.replaced_at.desc())
    ).all()
    oldest = {row.scrap_id: row for row in kept}  # the newest first: a scrap's oldest of this import stays
    put: list[str] = []
    for scrap_id, row in oldest.items():
        clash = conn.scalar(
            sa.select(scraps.c.id).where(
                scraps.c.source_type == row.source_type,
                scraps.c.content_hash == row.content_hash,
                scraps.c.deleted_at.is_(None),
                scraps.c.id != scrap_id,
            )
        )
        if clash is not None:
            continue  # its old text came in again as another scrap since: that one keeps it
        conn.execute(
            sa.update(scraps)
            .where(scraps.c.id == scrap_id)
            .values(
                content=row.content,
                content_hash=row.content_hash,
                title=row.title,
                refined_content=row.refined_content,
                given_tags=row.given_tags,
            )
        )
        analyse_again(conn, queue, scrap_id)
        put.append(scrap_id)
    conn.execute(sa.delete(scrap_versions).where(version.import_batch_id == batch_id))
    return put
