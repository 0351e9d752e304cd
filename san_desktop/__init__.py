"""SAN Desktop: scrap what you read, turn it into knowledge cards, TIL notes and recall quizzes."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("san-desktop")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"

APP_NAME = "SAN Desktop"
APP_ID = "san-desktop"
