"""SAN Desktop: scrap what you read, turn it into knowledge cards, TIL notes and recall quizzes."""

from __future__ import annotations

# The one place the version is written (pyproject.toml reads it from here): asking importlib.metadata
# would cost every command line call a scan of the installed packages.
__version__ = "0.1.0"

APP_NAME = "SAN Desktop"
APP_ID = "san-desktop"
