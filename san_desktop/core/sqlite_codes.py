"""SQLite's errors told apart by their result code, not their message (as qutebrowser's ``misc/sql.py``
does): a message may change between SQLite versions, or quote a table, a path or a value that happens to
hold "locked". Both drivers (``sqlite3`` and ``sqlean``) put the code on their exceptions as
``sqlite_errorcode``; ``sqlean`` gives the primary code only, so only primary codes are compared
(https://www.sqlite.org/rescode.html). SQLAlchemy's wrappers carry the driver's exception as ``orig``.

A library on PostgreSQL: psycopg's errors carry the server's SQLSTATE (``sqlstate``); the conditions the
queue tells apart (a constraint, a lock) are told by it the same way.
"""

from __future__ import annotations

SQLITE_BUSY = 5  # another connection holds the lock past the busy timeout
SQLITE_LOCKED = 6  # a conflict within one connection (shared cache)
SQLITE_READONLY = 8
SQLITE_IOERR = 10  # a shared-memory file that cannot grow on a full disk says only this
SQLITE_CORRUPT = 11
SQLITE_FULL = 13
SQLITE_CANTOPEN = 14
SQLITE_CONSTRAINT = 19
SQLITE_NOTADB = 26


def sqlite_code(exc: BaseException | None) -> int | None:
    """The primary result code of the SQLite error ``exc`` is or wraps (through SQLAlchemy's ``orig`` or
    the cause chain); None when it is no SQLite error."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        code = getattr(exc, "sqlite_errorcode", None)
        if isinstance(code, int):
            return code & 0xFF
        exc = getattr(exc, "orig", None) or exc.__cause__ or exc.__context__
    return None


def sqlstate(exc: BaseException | None) -> str:
    """The SQLSTATE of the PostgreSQL error ``exc`` is or wraps ("" when it is none)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        state = getattr(exc, "sqlstate", None)
        if isinstance(state, str) and state:
            return state
        exc = getattr(exc, "orig", None) or exc.__cause__ or exc.__context__
    return ""


def is_locked(exc: BaseException) -> bool:
    # PostgreSQL: lock_not_available (a lock_timeout passed)
    return sqlite_code(exc) in (SQLITE_BUSY, SQLITE_LOCKED) or sqlstate(exc) == "55P03"


def is_damaged(exc: BaseException) -> bool:
    """Malformed, or not a database at all."""
    return sqlite_code(exc) in (SQLITE_CORRUPT, SQLITE_NOTADB)


def is_constraint(exc: BaseException) -> bool:
    # PostgreSQL: class 23, integrity constraint violation (unique, foreign key, check, not null)
    return sqlite_code(exc) == SQLITE_CONSTRAINT or sqlstate(exc).startswith("23")
