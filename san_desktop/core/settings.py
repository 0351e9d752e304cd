"""User settings, kept as JSON in the data directory (``settings.json``); secrets never go here."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SETTINGS_FILE = "settings.json"


@dataclass(frozen=True)
class JobSettings:
    ai_pool_size: int = 2
    github_pool_size: int = 1
    max_attempts: int = 3
    # transient failures wait backoff_base * 2**(attempt-1) seconds (with jitter), at most backoff_max
    backoff_base_seconds: float = 5.0
    backoff_max_seconds: float = 600.0
    # a claimed job's lease; a job PROCESSING past it in the live session is reported as stalled
    lease_seconds: float = 3600.0
    # how often other processes' jobs (the command line) are looked for
    poll_interval_seconds: float = 2.0
    # recovery sweep (seed: every 2 hours) and its thresholds, counted from when the work started
    sweep_interval_seconds: float = 7200.0
    pending_overdue_seconds: float = 1800.0
    processing_stall_seconds: float = 3600.0
    # a job whose run was interrupted this often (the app keeps dying on it) fails instead
    max_interruptions: int = 5
    # circuit breaker of the AI pool
    breaker_failure_threshold: int = 5
    breaker_cooldown_seconds: float = 60.0
    breaker_max_cooldown_seconds: float = 900.0
    # a rate limit longer than this fails the attempt instead of waiting
    max_rate_limit_wait_seconds: float = 3600.0

    def __post_init__(self) -> None:
        for name in ("ai_pool_size", "github_pool_size", "max_attempts", "max_interruptions"):
            if getattr(self, name) < 1:
                raise ValueError(f"jobs.{name} must be at least 1")
        for item in fields(self):
            if isinstance(getattr(self, item.name), float) and getattr(self, item.name) < 0:
                raise ValueError(f"jobs.{item.name} must not be negative")


@dataclass(frozen=True)
class Settings:
    jobs: JobSettings = field(default_factory=JobSettings)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _section(cls: type[JobSettings], raw: Any) -> JobSettings:
    if not isinstance(raw, dict):
        return cls()
    known = {item.name: item for item in fields(cls)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            log.warning("Ignoring unknown setting jobs.%s", key)
            continue
        default = getattr(cls(), key)
        if isinstance(default, float) and isinstance(value, int | float) and not isinstance(value, bool):
            values[key] = float(value)
        elif type(value) is type(default):
            values[key] = value
        else:
            log.warning("Ignoring setting jobs.%s=%r: expected %s", key, value, type(default).__name__)
    try:
        return cls(**values)
    except ValueError as exc:
        log.warning("Ignoring invalid job settings (%s); using defaults", exc)
        return cls()


def load_settings(data_dir: Path) -> Settings:
    """Settings from ``settings.json``; a missing or unreadable file means defaults (logged)."""
    path = data_dir / SETTINGS_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Settings()
    except (OSError, ValueError) as exc:
        log.warning("Could not read %s (%s); using default settings", path, exc)
        return Settings()
    if not isinstance(raw, dict):
        log.warning("%s does not hold a JSON object; using default settings", path)
        return Settings()
    return Settings(jobs=_section(JobSettings, raw.get("jobs")))


def save_settings(data_dir: Path, settings: Settings) -> None:
    """Write atomically (temporary file + rename), so a crash never leaves half a file."""
    path = data_dir / SETTINGS_FILE
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(settings.as_dict(), indent=2, sort_keys=True), encoding="utf-8")
    os.replace(temporary, path)


def with_jobs(settings: Settings, **changes: Any) -> Settings:
    return replace(settings, jobs=replace(settings.jobs, **changes))
