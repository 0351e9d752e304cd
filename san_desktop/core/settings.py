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


AI_PROVIDERS = ("local", "openai")


@dataclass(frozen=True)
class AISettings:
    """Which AI provider runs card analysis and refinement. The API key lives in the keyring."""

    provider: str = "local"  # "local" (embedded, offline) or "openai" (any OpenAI-compatible server)
    base_url: str = "http://127.0.0.1:11434/v1"  # Ollama's default; OpenAI: https://api.openai.com/v1
    chat_model: str = "llama3.1"
    embedding_model: str = "nomic-embed-text"
    timeout_seconds: float = 120.0  # slow local models need long timeouts
    temperature: float = 0.2

    def __post_init__(self) -> None:
        if self.provider not in AI_PROVIDERS:
            raise ValueError(f"ai.provider must be one of {', '.join(AI_PROVIDERS)}")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError("ai.base_url must start with http:// or https://")
        if self.timeout_seconds <= 0:
            raise ValueError("ai.timeout_seconds must be positive")


@dataclass(frozen=True)
class CaptureSettings:
    max_bytes: int = 1_000_000
    watch_clipboard: bool = False  # opt-in: scrap whatever is copied

    def __post_init__(self) -> None:
        if self.max_bytes < 1:
            raise ValueError("capture.max_bytes must be positive")


@dataclass(frozen=True)
class Settings:
    jobs: JobSettings = field(default_factory=JobSettings)
    ai: AISettings = field(default_factory=AISettings)
    capture: CaptureSettings = field(default_factory=CaptureSettings)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


SECTIONS: dict[str, type[Any]] = {"jobs": JobSettings, "ai": AISettings, "capture": CaptureSettings}


def coerce(section: str, key: str, value: Any) -> Any:
    """``value`` as the type of ``section.key``'s default, or ValueError saying what is expected."""
    cls = SECTIONS[section]
    known = {item.name for item in fields(cls)}
    if key not in known:
        raise ValueError(f"unknown setting {section}.{key}; known: {', '.join(sorted(known))}")
    default = getattr(cls(), key)
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "on", "off", "yes", "no", "1", "0"):
            return value.lower() in ("true", "on", "yes", "1")
    elif isinstance(default, float):
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
    elif isinstance(default, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
    elif isinstance(default, str) and isinstance(value, str):
        return value
    raise ValueError(f"{section}.{key} expects a {type(default).__name__}, not {value!r}")


def _section(name: str, raw: Any) -> Any:
    cls = SECTIONS[name]
    if not isinstance(raw, dict):
        return cls()
    values: dict[str, Any] = {}
    for key, value in raw.items():
        try:
            values[key] = coerce(name, key, value)
        except ValueError as exc:
            log.warning("Ignoring a setting: %s", exc)
    try:
        return cls(**values)
    except ValueError as exc:
        log.warning("Ignoring invalid %s settings (%s); using defaults", name, exc)
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
    return Settings(**{name: _section(name, raw.get(name)) for name in SECTIONS})


def save_settings(data_dir: Path, settings: Settings) -> None:
    """Write atomically (temporary file + rename), so a crash never leaves half a file."""
    path = data_dir / SETTINGS_FILE
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(settings.as_dict(), indent=2, sort_keys=True), encoding="utf-8")
    os.replace(temporary, path)


def with_value(settings: Settings, section: str, key: str, value: Any) -> Settings:
    """A copy with ``section.key`` set (coerced and validated); raises ValueError with a reason."""
    if section not in SECTIONS:
        raise ValueError(f"unknown settings section {section!r}; known: {', '.join(SECTIONS)}")
    current = getattr(settings, section)
    return replace(settings, **{section: replace(current, **{key: coerce(section, key, value)})})
