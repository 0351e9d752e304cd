"""Starred-repository recommendations: ranking 5,000 starred repositories against 10,000 cards of the ranking
window with the embedded provider — embedding the repositories the first time, a ranking with their
embeddings cached, and storing the run and reading it back as the Stars page does."""

from __future__ import annotations

import json
import random
import re
import time
from datetime import timedelta
from typing import Any

import numpy as np
import sqlalchemy as sa

from bench.common import Row, below, median, temporary_data_dir
from san_desktop.ai.local import LocalProvider
from san_desktop.bootstrap import start_backend
from san_desktop.core.ids import new_id
from san_desktop.core.settings import JobSettings, StarSettings
from san_desktop.core.text import content_hash
from san_desktop.core.timeutil import utcnow
from san_desktop.db.backends.sqlite.jobs import db_time
from san_desktop.db.models import StarredRepository
from san_desktop.db.vectors import to_stored
from san_desktop.queue.store import JobStore
from san_desktop.services.stars import KEPT_PER_RUN, StarService, repository_text

REPOSITORIES = 5_000
CARDS = 10_000
REPEATS = 5
PAGE = 50  # what the Stars page and `san stars recommend` read
LANGUAGES = ("Python",) * 6 + ("TypeScript",) * 3 + ("Go", "Go", "Rust", "Rust", "C", "C++", "Java", "Shell", None)
STOP = frozenset(
    "the this that with from into than then when which while what where there their these those have been "
    "will would could should does each other only also more most such some many much very just over under "
    "about after before between through using used uses like make made return returns value values none true "
    "false default given object objects instance method methods function functions argument arguments".split()
)


def _sentences() -> list[str]:
    """Real technical sentences (docstrings of the standard library and installed packages)."""
    from tests.support.real_text import paragraphs

    found = [
        " ".join(sentence.split()).rstrip(".") + "."
        for paragraph in paragraphs()
        for sentence in paragraph.replace("\n", " ").split(". ")
        if 40 <= len(sentence.strip()) <= 200
    ]
    return list(dict.fromkeys(found))


def _words(text: str) -> list[str]:
    return [word for word in re.findall(r"\b[a-z][a-z]{3,14}\b", text.lower()) if word not in STOP]


def _repositories(rng: random.Random, now: Any) -> list[tuple[Any, ...]]:
    """Starred repositories as GitHub lists them: owner/name made of real words, a real sentence as the
    description, topics from its words, a language, stars spread over orders of magnitude, 1% archived."""
    sentences = _sentences()
    vocabulary = sorted({word for sentence in sentences for word in _words(sentence)})
    rows: list[tuple[Any, ...]] = []
    names: set[str] = set()
    while len(rows) < REPOSITORIES:
        description = rng.choice(sentences)
        words = _words(description) or [rng.choice(vocabulary)]
        name = "-".join(rng.sample(words, min(len(words), rng.choice((1, 2, 2, 3)))))
        full_name = f"{rng.choice(vocabulary)}{rng.choice(('', '-dev', 'hq', '-labs', 'io'))}/{name}"
        if full_name in names:
            continue
        names.add(full_name)
        topics = json.dumps(sorted(set(rng.sample(words, min(len(words), rng.randint(0, 5))))))
        starred = now - timedelta(days=rng.uniform(0, 2000))
        pushed = starred + timedelta(days=rng.uniform(-300, 300))
        n = len(rows)
        rows.append(
            (
                new_id(), full_name, description, rng.choice(LANGUAGES), topics, int(10 ** rng.uniform(0, 5.3)),
                f"https://github.com/{full_name}", db_time(starred), db_time(pushed), n % 100 == 42, n % 20 == 3,
                db_time(now), db_time(now),
            )
        )  # fmt: skip
    return rows


def _fill(stars: StarService, window_days: int) -> float:
    """10,000 real-text cards made within the window with the embedded provider's vectors, and 5,000
    starred repositories not yet embedded, in one transaction; the seconds it took."""
    from tests.support.real_text import card_texts

    started = time.perf_counter()
    rng = random.Random(15)
    now = utcnow()
    provider = LocalProvider()
    texts = card_texts(CARDS)
    vectors = provider.embed(texts)
    scraps, cards, embeddings = [], [], []
    for text, vector in zip(texts, vectors, strict=True):
        scrap_id, card_id = new_id(), new_id()
        created = db_time(now - timedelta(days=rng.uniform(0, window_days - 1)))
        scraps.append((scrap_id, "TEXT", text, content_hash(text), created))
        title = " ".join(text.split())[:60]
        cards.append((card_id, scrap_id, title, text[:400], provider.embedding_model, created, created))
        embeddings.append((card_id, provider.embedding_model, vector.shape[0], to_stored(vector), created))
    repositories = _repositories(rng, now)
    with stars.db.write_cursor() as cursor:
        cursor.executemany(
            "INSERT INTO scraps (id, source_type, content, content_hash, created_at) VALUES (?, ?, ?, ?, ?)", scraps
        )
        cursor.executemany(
            "INSERT INTO knowledge_cards (id, scrap_id, title, summary, embedding_model, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            cards,
        )
        cursor.executemany(
            "INSERT INTO card_embeddings (card_id, model_id, dim, vector, created_at) VALUES (?, ?, ?, ?, ?)",
            embeddings,
        )
        cursor.executemany(
            "INSERT INTO starred_repositories (id, full_name, description, language, topics, stars, html_url, "
            "starred_at, pushed_at, archived, fork, gone, not_interested, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?)",
            repositories,
        )
    return time.perf_counter() - started


def _ms(began: float) -> float:
    return (time.perf_counter() - began) * 1000


def bench_ranking() -> list[Row]:
    window_days = StarSettings().window_days
    with temporary_data_dir() as directory:
        backend = start_backend(directory, kind="headless", log_to_stderr=False)
        try:
            stars = StarService(backend.db, JobStore(backend.db, JobSettings()))
            built = _fill(stars, window_days)
            provider = LocalProvider()

            began = time.perf_counter()
            embedded = stars.embed_repositories(provider)
            embed_ms = _ms(began)
            assert embedded == REPOSITORIES, embedded
            with backend.db.sessions() as session:
                repository_texts = [repository_text(row) for row in session.scalars(sa.select(StarredRepository))]
            began = time.perf_counter()
            provider.embed(repository_texts)
            provider_ms = _ms(began)

            rank_ms, ranked = [], []
            for _ in range(REPEATS):
                began = time.perf_counter()
                ranked = stars.rank(provider, window_days)
                rank_ms.append(_ms(began))
            assert len(ranked) == KEPT_PER_RUN, len(ranked)
            cards_ms = median([_timed(lambda: stars._cards(provider.embedding_model, window_days)) for _ in range(3)])
            titles, matrix_cards, _card_count = stars._cards(provider.embedding_model, window_days)
            assert len(titles) == CARDS, len(titles)

            store_ms, read_ms = [], []
            for _ in range(REPEATS):
                began = time.perf_counter()
                with backend.db.write() as session:
                    stars.store_run(session, new_id(), ranked)
                store_ms.append(_ms(began))
                began = time.perf_counter()
                page = stars.latest(limit=PAGE)
                read_ms.append(_ms(began))
            assert [item.repository_id for item in page] == [repo_id for repo_id, _s, _r in ranked[:PAGE]]
            top_reason = " ".join(page[0].reason.split())

            rng = np.random.default_rng(15)
            repos = rng.standard_normal((REPOSITORIES, matrix_cards.shape[1])).astype(np.float32)
            numpy_ms = []
            for _ in range(REPEATS):
                began = time.perf_counter()
                similarity = repos @ matrix_cards.T
                np.argpartition(-similarity, 1, axis=1)[:, :2]
                numpy_ms.append(_ms(began))
        finally:
            backend.close()
    label = f"{REPOSITORIES:,} starred repositories against {CARDS:,} cards"
    return [
        Row(
            f"stars: embed {REPOSITORIES:,} repositories (a first ranking), embedded provider",
            embed_ms,
            "ms",
            f"batches of 64 read, embedded and written back; a first ranking job is this plus the cached "
            f"ranking below; data built in {built:.1f} s",
            anchor=provider_ms,
            anchor_name="provider embed alone",
        ),
        Row(
            f"stars: rank {label}, embeddings cached",
            median(rank_ms),
            "ms",
            f"median of {REPEATS}, worst {max(rank_ms):.0f} ms; of which the window's cards read and decoded "
            f"{cards_ms:.0f} ms; kept {len(ranked)}; top reason: {top_reason[:80]}…",
            anchor=median(numpy_ms),
            anchor_name="numpy product + top 2, float32",
        ),
        Row(
            f"stars: store a run ({KEPT_PER_RUN}) + read the latest {PAGE}",
            median(store_ms) + median(read_ms),
            "ms",
            f"store {median(store_ms):.1f} ms, read {median(read_ms):.1f} ms (the page's and the CLI's read)",
            target=below(50),
        ),
    ]


def _timed(call: Any) -> float:
    began = time.perf_counter()
    call()
    return _ms(began)


def run_all() -> list[Row]:
    return bench_ranking()


if __name__ == "__main__":
    from bench.common import print_table

    print_table(run_all())
