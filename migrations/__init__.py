"""Alembic migrations (installed as ``san_desktop.migrations``)."""
