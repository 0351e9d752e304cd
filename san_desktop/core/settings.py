"""User settings, kept as JSON in the data directory (``settings.json``); secrets never go here."""

from __future__ import annotations

import json
import logging
import math
import os
import re
from collections.abc import Callable
from dataclasses import Field, asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from san_desktop.core.credentials import AI_API_KEY, GITHUB_TOKEN, secret_title, ways_to_set
from san_desktop.core.enums import JobPool
from san_desktop.core.errors import SanError, StorageFullError, is_storage_full
from san_desktop.core.repo_paths import DEFAULT_TEMPLATE, check_branch_name, check_repository_name, parse_template

log = logging.getLogger(__name__)

SETTINGS_FILE = "settings.json"


def _number(default: float, low: float, high: float) -> Any:
    """A numeric setting with its allowed range (inclusive), used by loading, ``config set`` and the dialog."""
    return field(default=default, metadata={"range": (low, high)})


DAY = 86_400.0
LOCAL_AI_THREADS = 2  # the embedded provider's jobs that overlap usefully (Settings.ai_threads)
LOCAL_AI_THREADS_WITH_WINDOW = 1  # ... and while the window runs (Settings.ai_threads_with_window)
_CLOCK = re.compile(r"(?:[01]\d|2[0-3]):[0-5]\d")
# the window's remembered state (written by the window, so a bad value is a hand edit)
_BASE64 = re.compile(r"[A-Za-z0-9+/]{0,4000}={0,2}")
_SPLITTER = r"[A-Za-z0-9_.-]{1,80}=\d{1,6}(?:,\d{1,6}){0,9}"
_SPLITTERS = re.compile(rf"{_SPLITTER}(?:;{_SPLITTER}){{0,49}}")
_PAGE = re.compile(r"[a-z0-9_-]{1,40}")


def _unless_empty(check: Callable[[str], object]) -> Callable[[str], object]:
    """``check`` for a setting whose empty value means "not set"."""
    return lambda value: check(value) if value else None


def _validate(instance: Any, section: str) -> None:
    """Every field of a settings section holds a value of its type and range (one schema for all)."""
    for item in fields(instance):
        check_value(section, item.name, getattr(instance, item.name), item)


@dataclass(frozen=True)
class JobSettings:
    ai_pool_size: int = _number(2, 1, 32)  # the embedded provider: one with the window, two headless (Settings)
    github_pool_size: int = _number(1, 1, 8)
    max_attempts: int = _number(3, 1, 100)
    # transient failures wait backoff_base * 2**(attempt-1) seconds (with jitter), at most backoff_max
    backoff_base_seconds: float = _number(5.0, 0.0, 3600.0)
    backoff_max_seconds: float = _number(600.0, 0.0, DAY)
    # A claimed job's lease, renewed by a heartbeat while the job runs (``jobs.leases``): a machine that stops
    # (killed, cut off from the server) has its running jobs taken over by another this long after.
    lease_seconds: float = _number(60.0, 1.0, 7 * DAY)
    # how often other processes' jobs (the command line) are looked for
    poll_interval_seconds: float = _number(2.0, 0.01, 3600.0)
    # recovery sweep (seed: every 2 hours) and its thresholds, counted from when the work started
    sweep_interval_seconds: float = _number(7200.0, 1.0, 7 * DAY)
    pending_overdue_seconds: float = _number(1800.0, 0.0, 30 * DAY)
    processing_stall_seconds: float = _number(3600.0, 0.0, 30 * DAY)
    # a job whose run was interrupted this often (the app keeps dying on it) fails instead
    max_interruptions: int = _number(5, 1, 100)
    # finished jobs are pruned by the sweep: completed ones after this many days, failed and cancelled ones
    # (what a person may still look at or retry) after the other
    keep_completed_days: float = _number(7.0, 0.0, 3650.0)
    keep_failed_days: float = _number(30.0, 0.0, 3650.0)
    # circuit breaker of the AI pool
    breaker_failure_threshold: int = _number(5, 1, 1000)
    breaker_cooldown_seconds: float = _number(60.0, 0.0, DAY)
    breaker_max_cooldown_seconds: float = _number(900.0, 0.0, 7 * DAY)
    # a rate limit longer than this fails the attempt instead of waiting
    max_rate_limit_wait_seconds: float = _number(3600.0, 0.0, 7 * DAY)
    # pools the user paused (the job monitor, `san jobs pause`): nothing new starts there until resumed
    ai_paused: bool = False
    github_paused: bool = False

    def __post_init__(self) -> None:
        _validate(self, "jobs")

    def paused(self, pool: JobPool) -> bool:
        return self.ai_paused if pool is JobPool.AI else self.github_paused

    @staticmethod
    def pause_key(pool: JobPool) -> str:
        """The setting that holds ``pool``'s pause."""
        return "ai_paused" if pool is JobPool.AI else "github_paused"


AI_PROVIDERS = ("local", "openai")


@dataclass(frozen=True)
class AISettings:
    """Which AI provider runs card analysis and refinement. The API key lives in the keyring."""

    provider: str = field(default="local", metadata={"choices": AI_PROVIDERS})  # "local": embedded, offline
    base_url: str = field(default="http://127.0.0.1:11434/v1", metadata={"url": True})  # Ollama's default
    chat_model: str = "llama3.1"
    embedding_model: str = "nomic-embed-text"
    timeout_seconds: float = _number(120.0, 0.1, 3600.0)  # slow local models need long timeouts
    temperature: float = _number(0.2, 0.0, 2.0)
    til_cards_per_call: int = _number(20, 1, 200)  # writing a TIL: cards per request (map step)
    # the embedded provider: one call (a card, a TIL, quizzes) stops past this, with a sentence saying why
    local_time_limit_seconds: float = _number(30.0, 0.1, 3600.0)

    def __post_init__(self) -> None:
        _validate(self, "ai")


@dataclass(frozen=True)
class CaptureSettings:
    max_bytes: int = _number(1_000_000, 1, 100_000_000)
    watch_clipboard: bool = False  # opt-in: scrap whatever is copied
    # a scrapped link's page: downloaded at most this large, waiting at most this long
    fetch_max_bytes: int = _number(5_000_000, 1, 100_000_000)
    fetch_timeout_seconds: float = _number(20.0, 0.1, 600.0)
    # the browser extension's endpoint (``web.endpoint``): on while the app runs, on 127.0.0.1 only and
    # useless without the token the person pastes into the extension, so on by default
    browser_endpoint: bool = True

    def __post_init__(self) -> None:
        _validate(self, "capture")


@dataclass(frozen=True)
class TilSettings:
    """The daily TIL: which day a card belongs to, and how many recall cards a TIL links."""

    timezone: str = field(default="", metadata={"timezone": True})  # "" = the system's; else e.g. Asia/Seoul
    recall_limit: int = _number(5, 1, 50)
    edited_versions_kept: int = _number(10, 1, 1000)  # older edits go; the generated ones and the latest stay

    def __post_init__(self) -> None:
        _validate(self, "til")


GITHUB_TARGETS = ("github", "local")


@dataclass(frozen=True)
class GitHubSettings:
    """Where TILs are committed: a GitHub repository (token in the keyring) or a local git repository."""

    target: str = field(default="github", metadata={"choices": GITHUB_TARGETS})
    api_url: str = field(default="https://api.github.com", metadata={"url": True})  # GHE: https://HOST/api/v3
    repository: str = field(default="", metadata={"check": _unless_empty(check_repository_name)})  # owner/name
    branch: str = field(default="main", metadata={"check": check_branch_name})
    path_template: str = field(default=DEFAULT_TEMPLATE, metadata={"check": parse_template})
    local_repository: str = ""  # a folder holding a git repository
    # a branch checked out in no work tree there (the user's files and index are never touched)
    local_branch: str = field(default="til", metadata={"check": check_branch_name})
    author_name: str = ""  # empty: the repository's own configuration
    author_email: str = ""

    def __post_init__(self) -> None:
        _validate(self, "github")


@dataclass(frozen=True)
class QuizSettings:
    """Recall quizzes: how well to remember (FSRS's desired retention), whether a finished TIL asks for its
    day's quizzes, and when the daily "quizzes due" reminder comes ("" for none)."""

    desired_retention: float = _number(0.9, 0.7, 0.99)
    generate_after_til: bool = True
    reminder_time: str = field(default="09:00", metadata={"clock": True})  # HH:MM, local time

    def __post_init__(self) -> None:
        _validate(self, "quiz")


@dataclass(frozen=True)
class TrashSettings:
    """What is deleted (a scrap, an import undone) waits in the Trash this many days, restorable with its card,
    edits, quizzes and review history; the recovery sweep then deletes it for good."""

    keep_days: float = _number(30.0, 1.0, 3650.0)

    def __post_init__(self) -> None:
        _validate(self, "trash")


@dataclass(frozen=True)
class StarSettings:
    """Starred-repository recommendations: what "learning now" means, in days of cards."""

    window_days: int = _number(30, 1, 3650)

    def __post_init__(self) -> None:
        _validate(self, "stars")


@dataclass(frozen=True)
class NotificationSettings:
    """Which news the tray (or, without one, the status bar) brings; bursts are coalesced into one message."""

    cards_ready: bool = True
    til_ready: bool = True
    commit_done: bool = True
    failures: bool = True
    do_not_disturb: bool = False  # nothing at all until turned off

    def __post_init__(self) -> None:
        _validate(self, "notifications")


DATABASE_URL_ENV = "SAN_DATABASE_URL"  # overrides ``database.url`` (a machine's service, a test)


def check_database_url(value: str, *, password_allowed: bool = False) -> None:
    """The form of a PostgreSQL URL: a scheme, a server, a database, no password unless ``password_allowed`` (the
    environment's: a password never goes into ``settings.json``). Which schemes name a database SAN opens, the
    database backends know (``db.backends.check_url``, asked where a URL is set or opened)."""
    parts = urlsplit(value)
    if not parts.scheme:
        raise ValueError(
            "give a PostgreSQL URL such as postgres://user@host/san (empty: the SQLite file in the data folder)"
        )
    if not parts.hostname and "host=" not in parts.query:
        raise ValueError("the URL names no server (postgres://user@HOST/san)")
    if not parts.path.strip("/"):
        raise ValueError("the URL names no database (postgres://user@host/DATABASE)")
    if not password_allowed and (parts.password is not None or "password=" in parts.query):
        raise ValueError(
            "keep the password out of the URL (settings.json is plain text): store it with "
            "`san config set database.password`, or set PGPASSWORD or use ~/.pgpass"
        )


@dataclass(frozen=True)
class DatabaseSettings:
    """Where the library is kept: empty, the SQLite file in the data folder; a PostgreSQL URL, a database on a
    server that several machines can share (``$SAN_DATABASE_URL`` wins over this)."""

    url: str = field(default="", metadata={"check": _unless_empty(check_database_url)})

    def __post_init__(self) -> None:
        _validate(self, "database")


@dataclass(frozen=True)
class WindowSettings:
    """How the main window looked when it last closed, restored at the next start: its geometry (Qt's
    ``saveGeometry``, base64), the sizes of the splitters in its pages ("page.name=300,700;…") and the page
    it showed. Empty means the defaults. Written by the window as it closes."""

    geometry: str = field(default="", metadata={"pattern": (_BASE64, "Qt window geometry in base64")})
    splitters: str = field(
        default="",
        metadata={"pattern": (_SPLITTERS, "name=size,size pairs separated by ; (e.g. cards.splitter=300,700)")},
    )
    last_page: str = field(default="", metadata={"pattern": (_PAGE, "a page name such as inbox or cards")})

    def __post_init__(self) -> None:
        _validate(self, "window")


@dataclass(frozen=True)
class Settings:
    jobs: JobSettings = field(default_factory=JobSettings)
    ai: AISettings = field(default_factory=AISettings)
    capture: CaptureSettings = field(default_factory=CaptureSettings)
    til: TilSettings = field(default_factory=TilSettings)
    github: GitHubSettings = field(default_factory=GitHubSettings)
    notifications: NotificationSettings = field(default_factory=NotificationSettings)
    quiz: QuizSettings = field(default_factory=QuizSettings)
    stars: StarSettings = field(default_factory=StarSettings)
    trash: TrashSettings = field(default_factory=TrashSettings)
    window: WindowSettings = field(default_factory=WindowSettings)
    database: DatabaseSettings = field(default_factory=DatabaseSettings)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def ai_threads(self) -> int:
        """Threads of the AI pool without a window (``san jobs run``). The embedded provider's work is CPU
        work, about half of it Python (which holds the interpreter lock) and half the sentence encoder's BLAS
        (one thread, which lets go of it): two jobs overlap one's encoding with the other's Python, a third
        only contends; so at most two, and no more than the cores (``make bench``: scraps to cards end to
        end). A server's answers are waited for, so ``jobs.ai_pool_size`` calls overlap."""
        if self.ai.provider == "local":
            return max(1, min(self.jobs.ai_pool_size, LOCAL_AI_THREADS, os.cpu_count() or 1))
        return self.jobs.ai_pool_size

    @property
    def ai_threads_with_window(self) -> int:
        """Threads of the AI pool while the window runs: the embedded provider makes one card at a time
        there, in its one child process (``ai.own_process``). A second thread would need a second child (its
        own sentence encoder's memory again) and, on two cores, leaves the window's own Python (an import's)
        too little CPU: cards come much faster after a large import, but the window's worst lag passes the
        50 ms a person notices (``make bench``: the import)."""
        if self.ai.provider == "local":
            return min(self.ai_threads, LOCAL_AI_THREADS_WITH_WINDOW)
        return self.ai_threads


SECTIONS: dict[str, type[Any]] = {
    "jobs": JobSettings,
    "ai": AISettings,
    "capture": CaptureSettings,
    "til": TilSettings,
    "github": GitHubSettings,
    "notifications": NotificationSettings,
    "quiz": QuizSettings,
    "stars": StarSettings,
    "trash": TrashSettings,
    "window": WindowSettings,
    "database": DatabaseSettings,
}


def _field(section: str, key: str) -> Field[Any]:
    cls = SECTIONS[section]
    for item in fields(cls):
        if item.name == key:
            return item
    known = ", ".join(sorted(item.name for item in fields(cls)))
    raise ValueError(f"unknown setting {section}.{key}; known: {known}")


def check_value(section: str, key: str, value: Any, item: Field[Any] | None = None) -> None:
    """Raise ValueError saying what ``section.key`` accepts when ``value`` (already of the right type)
    is out of its range, not finite, not one of its choices, or not a usable URL."""
    item = item or _field(section, key)
    name = f"{section}.{key}"
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, not {value!r}")
    if (bounds := item.metadata.get("range")) is not None and not bounds[0] <= value <= bounds[1]:
        raise ValueError(f"{name} must be between {bounds[0]:g} and {bounds[1]:g}, not {value!r}")
    if (choices := item.metadata.get("choices")) is not None and value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, not {value!r}")
    if item.metadata.get("timezone") and value:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"{name} must be a time zone name such as Asia/Seoul (or empty), not {value!r}") from None
    if item.metadata.get("clock") and value and not _CLOCK.fullmatch(value):
        raise ValueError(f"{name} must be a time of day as HH:MM (or empty for none), not {value!r}")
    if (pattern := item.metadata.get("pattern")) is not None and value and not pattern[0].fullmatch(value):
        shown = value if len(value) <= 60 else f"{value[:57]}..."
        raise ValueError(f"{name} must be {pattern[1]}, not {shown!r}")
    if (check := item.metadata.get("check")) is not None:
        try:
            check(value)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    if item.metadata.get("url"):
        parsed = urlsplit(value)
        if "@" in parsed.netloc:  # before any message that would show the value: it holds a secret
            raise ValueError(f"{name} must not contain a user name or password: put {_secret_home(section)}")
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"{name} must be an http:// or https:// address with a host, not {value!r}")


# where the secret that someone wrote into a URL setting belongs instead
_SECRET_OF = {"ai": AI_API_KEY, "github": GITHUB_TOKEN}


def _secret_home(section: str) -> str:
    name = _SECRET_OF.get(section)
    if name is None:
        return "the secret in Settings (kept in the keyring)"
    return f"{secret_title(name).lower()} where it belongs: {ways_to_set(name)}"


def _without_userinfo(section: str, key: str, value: Any, problems: list[str]) -> Any:
    """A hand-edited URL setting without its ``user:password@`` (reported without them)."""
    if not isinstance(value, str) or not _field(section, key).metadata.get("url"):
        return value
    try:
        parsed = urlsplit(value)
    except ValueError:
        return value  # refused as it is by the check
    if "@" not in parsed.netloc:
        return value
    problems.append(
        f"{section}.{key} holds a user name or password, which is left out: remove it from {SETTINGS_FILE} "
        f"and put {_secret_home(section)}"
    )
    return parsed._replace(netloc=parsed.netloc.rpartition("@")[2]).geturl()


def coerce(section: str, key: str, value: Any) -> Any:
    """``value`` as the type of ``section.key``'s default, checked against its range; or ValueError
    saying what is expected."""
    item = _field(section, key)
    default = getattr(SECTIONS[section](), key)
    converted = _convert(section, key, default, value)
    check_value(section, key, converted, item)
    return converted


def _convert(section: str, key: str, default: Any, value: Any) -> Any:
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


# Defaults that changed, and what they were. settings.json holds every value (a save writes them all), so a file
# cannot say whether its person chose the old default or never touched it: the old default means untouched, and
# gives way to the new one. jobs.lease_seconds was an hour, when nothing renewed a lease; a heartbeat renews it
# now, so a lease only says how soon a stopped machine's jobs are taken over (an hour chosen on purpose is no
# safer than a minute: a job is never taken from a machine that still renews it).
RETIRED_DEFAULTS: dict[tuple[str, str], object] = {("jobs", "lease_seconds"): 3600.0}


def _section(name: str, raw: Any, problems: list[str]) -> Any:
    cls = SECTIONS[name]
    if raw is None:
        return cls()
    if not isinstance(raw, dict):
        problems.append(f"{name}: not a section of settings ({raw!r}); using its defaults")
        return cls()
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if (name, key) in RETIRED_DEFAULTS and value == RETIRED_DEFAULTS[(name, key)]:
            continue  # the old default: the new one is used (and written at the next save)
        try:
            values[key] = coerce(name, key, _without_userinfo(name, key, value, problems))
        except ValueError as exc:
            problems.append(f"{exc}; using the default")
    return cls(**values)


def load_settings(data_dir: Path) -> Settings:
    """Settings from ``settings.json``; a missing or unreadable file means defaults, and a bad value the
    default for that key alone (both logged, with the key and the value)."""
    settings, problems = load_settings_checked(data_dir)
    for problem in problems:
        log.warning("settings.json: %s", problem)
    return settings


def load_settings_checked(data_dir: Path) -> tuple[Settings, list[str]]:
    """The settings and what was wrong in the file (each problem names the key and the value)."""
    path = data_dir / SETTINGS_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"), parse_constant=_reject_constant)
    except FileNotFoundError:
        return Settings(), []
    except (OSError, ValueError) as exc:
        return Settings(), [f"cannot be read ({exc}); using the default settings"]
    if not isinstance(raw, dict):
        return Settings(), ["does not hold a JSON object; using the default settings"]
    problems: list[str] = []
    sections = {name: _section(name, raw.get(name), problems) for name in SECTIONS}
    return Settings(**sections), problems


def _reject_constant(name: str) -> Any:
    return name  # NaN and Infinity come back as text, which the key's type then refuses by name


# What a library shared by several machines (on a server) keeps for all of them, in its database: where its TILs
# are committed, how quizzes are scheduled and how long its Trash keeps what was deleted. The rest (pool sizes,
# AI server, capture, window state) is each machine's own, in its settings.json.
SHARED_SETTINGS = (
    ("github", "repository"),
    ("github", "branch"),
    ("github", "path_template"),
    ("quiz", "desired_retention"),
    ("trash", "keep_days"),  # (whichever machine sweeps purges the library's one Trash)
)


def shared_values(settings: Settings) -> dict[str, Any]:
    """``{"github.repository": ..., ...}``: the shared settings' values in ``settings``."""
    return {f"{section}.{key}": getattr(getattr(settings, section), key) for section, key in SHARED_SETTINGS}


def with_shared(settings: Settings, values: dict[str, Any]) -> tuple[Settings, list[str]]:
    """``settings`` with the shared values a library keeps; a value this version refuses keeps the machine's
    own (and is said, with the key)."""
    problems: list[str] = []
    for name, value in values.items():
        section, _, key = name.partition(".")
        if (section, key) not in SHARED_SETTINGS:
            continue
        try:
            settings = with_value(settings, section, key, value)
        except (ValueError, TypeError) as exc:
            problems.append(f"{name} = {value!r} kept by the library is not usable here: {exc}")
    return settings, problems


def database_url(data_dir: Path) -> str:
    """The library's PostgreSQL URL ($SAN_DATABASE_URL, else ``database.url``), or "" for the SQLite file."""
    if from_environment := os.environ.get(DATABASE_URL_ENV, "").strip():
        check_database_url(from_environment, password_allowed=True)
        return from_environment
    return load_settings(data_dir).database.url


def save_settings(data_dir: Path, settings: Settings) -> None:
    """Write atomically (temporary file + rename), so a crash or a full disk never leaves half a file."""
    path = data_dir / SETTINGS_FILE
    temporary = path.with_suffix(".json.tmp")
    text = json.dumps(settings.as_dict(), indent=2, sort_keys=True, allow_nan=False)
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        if is_storage_full(exc):
            raise StorageFullError(path, "the settings were not changed") from exc
        raise SanError(f"Cannot write {path}: {exc.strerror or exc}. The settings were not changed.") from exc


def with_value(settings: Settings, section: str, key: str, value: Any) -> Settings:
    """A copy with ``section.key`` set (coerced and validated); raises ValueError with a reason."""
    if section not in SECTIONS:
        raise ValueError(f"unknown settings section {section!r}; known: {', '.join(SECTIONS)}")
    current = getattr(settings, section)
    return replace(settings, **{section: replace(current, **{key: coerce(section, key, value)})})
