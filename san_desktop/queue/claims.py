"""No job SQL lives here any more: it is each database's (``db.backends.sqlite.jobs``,
``db.backends.postgres.jobs``). ``db_time`` is named here only while ``bench/`` (another part of issue 39)
still imports it from this module."""

from __future__ import annotations

from san_desktop.db.backends.sqlite.jobs import db_time

__all__ = ["db_time"]
