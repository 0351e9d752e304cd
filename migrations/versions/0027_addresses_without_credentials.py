"""No stored address keeps the ``user:password@`` of its authority: a selection's page, an imported highlight's
source or a link kept it before the capture paths stripped it (issue 38, item 10).

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-07

A link (``URL``) is found again by its address's hash (``content_hash``): its hash follows its address, and
while its page is awaited its text is the address too. A link whose address without the user would be that of
another link of the library (a live one, or one in the Trash) keeps its row as it was apart from the password,
which a link's address never held (the address was normalised without it).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from san_desktop.core.text import content_hash
from san_desktop.core.urls import without_userinfo

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_scraps = sa.table(
    "scraps",
    sa.column("id", sa.String),
    sa.column("source_type", sa.String),
    sa.column("source_ref", sa.Text),
    sa.column("content", sa.Text),
    sa.column("content_hash", sa.String),
)


def upgrade() -> None:
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(_scraps.c.id, _scraps.c.source_type, _scraps.c.source_ref, _scraps.c.content).where(
            _scraps.c.source_ref.like("%@%")
        )
    ).all()
    links = {
        digest
        for (digest,) in connection.execute(sa.select(_scraps.c.content_hash).where(_scraps.c.source_type == "URL"))
    }
    for scrap_id, source_type, source_ref, content in rows:
        address = without_userinfo(source_ref)
        if address == source_ref:
            continue
        values: dict[str, str] = {"source_ref": address}
        if source_type == "URL":
            digest = content_hash(address)
            if digest in links:
                continue
            links.add(digest)
            values["content_hash"] = digest
            if content == source_ref:  # its page not read yet: the address is its text
                values["content"] = address
        connection.execute(sa.update(_scraps).where(_scraps.c.id == scrap_id).values(**values))


def downgrade() -> None:
    """Nothing to undo: the user names and passwords are gone, as they should be."""
