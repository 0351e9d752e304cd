"""Real technical prose for vector tests and benchmarks: docstring paragraphs of the standard library and
of installed packages (never a synthetic vocabulary, whose vectors behave nothing like real ones)."""

from __future__ import annotations

import importlib
import inspect
import warnings

MODULES = (
    "argparse", "asyncio.events", "calendar", "collections", "configparser", "contextlib", "csv", "dataclasses",
    "datetime", "decimal", "difflib", "email.message", "enum", "fractions", "functools", "heapq", "http.client",
    "inspect", "io", "itertools", "json", "logging", "optparse", "os", "pathlib", "pydoc", "random", "re",
    "shutil", "socket", "sqlite3", "ssl", "statistics", "string", "subprocess", "tarfile", "tempfile",
    "textwrap", "threading", "typing", "unittest.case", "urllib.request", "zipfile", "sqlalchemy.orm.session",
    "sqlalchemy.engine.base", "sqlalchemy.orm.query", "sqlalchemy.sql.elements", "sqlalchemy.sql.selectable",
    "sqlalchemy.sql.schema", "httpx._client", "alembic.command",
)  # fmt: skip


def paragraphs(limit: int | None = None) -> list[str]:
    found: list[str] = []
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        with warnings.catch_warnings():  # some members are deprecated aliases (typing.io): only their text is read
            warnings.simplefilter("ignore")
            docs = [inspect.getdoc(item) or "" for _name, item in inspect.getmembers(module)]
        for doc in docs:
            for paragraph in doc.split("\n\n"):
                if 150 <= len(paragraph) <= 1500:
                    found.append(paragraph)
    unique = list(dict.fromkeys(found))
    return unique[:limit] if limit else unique


def card_texts(count: int, seed: int = 1) -> list[str]:
    """``count`` card-sized texts of real prose: the paragraphs, then notes made of three real sentences
    from different paragraphs (as a scrap often joins what was read in different places)."""
    import random

    texts = paragraphs()
    sentences = [s.strip() for t in texts for s in t.replace("\n", " ").split(". ") if len(s.strip()) > 40]
    rng = random.Random(seed)
    while len(texts) < count:
        texts.append(". ".join(rng.sample(sentences, 3)) + ".")
    return texts[:count]
