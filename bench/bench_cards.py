"""Scrap and card benchmarks: capture latency on a full database, local analysis time, similar-card
query latency against a numpy brute-force scan of the same vectors."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import sqlalchemy as sa

from bench.common import Row, at_most, median, percentile, ratio_at_most, temporary_data_dir
from san_desktop.ai.calibration import GENERIC_THRESHOLD
from san_desktop.ai.local import LOCAL_DIMENSIONS, hashed_embed
from san_desktop.bootstrap import start_backend
from san_desktop.core.ids import new_id
from san_desktop.core.settings import JobSettings
from san_desktop.core.text import content_hash
from san_desktop.core.timeutil import utcnow
from san_desktop.db import vectors as vectors_module
from san_desktop.db.backends.sqlite.jobs import db_time
from san_desktop.db.vectors import stored_rows
from san_desktop.queue.store import JobStore
from san_desktop.services.cards import CardService, similar_cards
from san_desktop.services.scraps import ScrapService

SAMPLE = (
    "SQLite WAL mode lets readers continue while a writer commits. In WAL mode, changes are appended to a "
    "separate write-ahead log file; readers see a consistent snapshot. A checkpoint moves pages back into "
    "the database file. 리액트 훅은 함수 컴포넌트에서 상태를 관리하게 해준다. useEffect는 렌더링 이후에 실행된다. "
)


def _bulk_scraps(conn: object, count: int, tag: str) -> list[str]:
    now = db_time(utcnow())
    ids = [new_id() for _ in range(count)]
    rows = [
        {"id": i, "kind": "TEXT", "content": f"{tag} scrap {n} {SAMPLE[: n % 200]}",
         "hash": content_hash(f"{tag}-{n}"), "now": now}
        for n, i in enumerate(ids)
    ]  # fmt: skip
    conn.execute(  # type: ignore[attr-defined]
        sa.text(
            "INSERT INTO scraps (id, source_type, content, content_hash, created_at) "
            "VALUES (:id, :kind, :content, :hash, :now)"
        ),
        rows,
    )
    return ids


def _bulk_cards(
    conn: Any,
    scrap_ids: list[str],
    model: str,
    *,
    texts: list[str] | None = None,
    vectors: npt.NDArray[np.float32] | None = None,
) -> list[str]:
    """A card for each scrap (titled from ``texts`` when given), with its embedding when ``vectors`` are given."""
    now = db_time(utcnow())
    card_ids = [new_id() for _ in scrap_ids]
    titles = (
        [(text[:60], text) for text in texts] if texts else [(f"card {n}", "summary.") for n in range(len(scrap_ids))]
    )
    conn.execute(
        sa.text(
            "INSERT INTO knowledge_cards (id, scrap_id, title, summary, embedding_model, created_at, updated_at) "
            "VALUES (:id, :scrap, :title, :summary, :model, :now, :now)"
        ),
        [
            {"id": c, "scrap": s, "title": t, "summary": summary, "model": model, "now": now}
            for c, s, (t, summary) in zip(card_ids, scrap_ids, titles, strict=True)
        ],
    )
    if vectors is not None:
        conn.execute(
            sa.text(
                "INSERT INTO card_embeddings (card_id, model_id, dim, vector, created_at) "
                "VALUES (:card, :model, :dim, :vector, :now)"
            ),
            [
                {"card": c, "model": model, "dim": vectors.shape[1], "vector": blob, "now": now}
                for c, blob in stored_rows(card_ids, vectors)
            ],
        )
    return card_ids


def bench_capture(existing: int = 50_000, samples: int = 500) -> list[Row]:
    with temporary_data_dir() as directory:
        backend = start_backend(directory, kind="headless", log_to_stderr=False)
        with backend.db.engine.begin() as conn:  # one bulk write, no other writer
            _bulk_scraps(conn, existing, "old")
        scraps = ScrapService(backend.db, JobStore(backend.db, JobSettings()))
        latencies = []
        for n in range(samples):
            began = time.perf_counter()
            scraps.capture(f"new scrap {n}: {SAMPLE}")
            latencies.append((time.perf_counter() - began) * 1000)
        backend.close()
    return [
        Row(
            f"capture latency p50 ({existing:,} scraps stored)",
            median(latencies),
            "ms",
            "scrap + 2 jobs, one transaction",
        ),
        Row(f"capture latency p99 ({existing:,} scraps stored)", percentile(latencies, 99), "ms"),
    ]


WORDS = (
    "sqlite wal checkpoint index btree vacuum mvcc postgres query planner join transaction lock react hook "
    "state render effect component docker image layer kubernetes pod deploy helm kafka partition consumer "
    "offset stream spark batch python generator coroutine asyncio rust borrow lifetime trait tokio security "
    "token oauth jwt csrf xss test mock fixture coverage pytest 리액트 컴포넌트 상태 렌더링 데이터베이스 인덱스 "
    "트랜잭션 쿼리 배포 컨테이너 보안 인증 테스트"
).split()


def _texts(count: int, rng: np.random.Generator) -> list[str]:
    """Synthetic scraps on a few dozen overlapping topics, so that real neighbourhoods exist."""
    topics = [rng.choice(len(WORDS), size=6, replace=False) for _ in range(60)]
    texts = []
    for n in range(count):
        topic = topics[n % len(topics)]
        words = [WORDS[i] for i in rng.choice(topic, size=8)] + [WORDS[i] for i in rng.choice(len(WORDS), size=4)]
        texts.append(" ".join(words))
    return texts


@dataclass(frozen=True)
class SimilarRun:
    """Similar cards through the app against an exact numpy scan of the same vectors (the same queries, in turn)."""

    ours: list[float]  # ms of ``similar_cards``: index, live check, cards loaded
    exact: list[float]  # ms of matrix @ query and argpartition for the top 10
    app_overlap: float  # of the exact ten nearest, the share ``similar_cards`` shows (its threshold applied)
    held_out_recall: float  # vectors held out of the index ask it for their ten nearest: the share it finds
    cold: float  # ms of the first query after the start-up warm-up
    warm: float  # ms of that warm-up
    memory_mb: float  # the in-memory index: SimHash bits, 8-bit codes, ids
    queries: int
    held_out: int


def measure_similar(
    vectors: npt.NDArray[np.float32],
    held_out: npt.NDArray[np.float32],
    model: str,
    threshold: float,
    queries: int,
    rng: np.random.Generator,
) -> SimilarRun:
    """``vectors`` stored as cards of ``model`` in a fresh database; ``queries`` of them ask for their similar
    cards (within ``threshold``), then every ``held_out`` vector asks the index as a new card would."""
    count = len(vectors)
    with temporary_data_dir() as directory:
        backend = start_backend(directory, kind="headless", log_to_stderr=False)
        with backend.db.engine.begin() as conn:  # one bulk write, no other writer
            card_ids = _bulk_cards(conn, _bulk_scraps(conn, count, "vec"), model, vectors=vectors)
        picks = rng.choice(count, size=queries + 1, replace=False)
        began = time.perf_counter()
        cards = CardService(backend.db)
        cards.warm_up(model)  # what the app does at start, off the GUI thread
        warm = (time.perf_counter() - began) * 1000
        began = time.perf_counter()
        similar_cards(backend.db, card_ids[picks[0]], threshold, limit=10)
        cold = (time.perf_counter() - began) * 1000
        index = next(i for key, i in vectors_module._indexes.items() if key[0].endswith(str(backend.db.path)))
        memory_mb = sum(a.nbytes for a in (index.ids, index.bits, index.codes, index.scales)) / 1e6
        ours, brute, overlap = [], [], []
        for index in picks[1:]:
            began = time.perf_counter()
            found = similar_cards(backend.db, card_ids[index], threshold, limit=10)
            ours.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            scores = vectors @ vectors[index]
            scores[index] = -np.inf
            top = np.argpartition(-scores, 10)[:10]
            top = top[np.argsort(-scores[top])]
            brute.append((time.perf_counter() - began) * 1000)
            exact = {card_ids[i] for i in top}
            overlap.append(len(exact & {item.card.id for item in found}) / 10)
        held_out_recall = []
        with backend.db.engine.connect() as conn:
            for query in held_out:
                top = np.argpartition(-(vectors @ query), 10)[:10]
                found_ids = vectors_module.candidates(conn, model, query, 10)
                held_out_recall.append(len({card_ids[i] for i in top} & set(found_ids)) / 10)
        backend.close()
    return SimilarRun(
        ours,
        brute,
        float(np.mean(overlap)),
        float(np.mean(held_out_recall)),
        cold,
        warm,
        memory_mb,
        queries,
        len(held_out),
    )


def bench_similar(count: int, queries: int = 50, *, realistic: bool = False) -> list[Row]:
    rng = np.random.default_rng(7)
    # ``queries`` more than are indexed: texts held out of the index ask it as a new card would
    if realistic:
        from tests.support.real_text import card_texts  # docstring prose, not a toy vocabulary

        # the hashed n-grams: the sentence encoder would take an hour over 100k texts (bench_meaning
        # measures the index on vectors shaped as the encoder's)
        everything = hashed_embed(card_texts(count + queries)).astype(np.float32)
    else:
        everything = rng.standard_normal((count + queries, LOCAL_DIMENSIONS)).astype(np.float32)
        everything /= np.linalg.norm(everything, axis=1, keepdims=True)
    run = measure_similar(everything[:count], everything[count:], "bench-model", GENERIC_THRESHOLD, queries, rng)
    ours, brute, cold, warm = run.ours, run.exact, run.cold, run.warm
    p50, numpy_p50 = median(ours), median(brute)
    kind = "real-text cards, hashed n-grams" if realistic else "random unit vectors"
    label = f"{count:,} cards ({kind})"
    return [
        Row(
            f"similar cards p50, {label}",
            p50,
            "ms",
            f"p99 {percentile(ours, 99):.1f} ms; the app's path: index, live check, cards loaded",
            anchor=numpy_p50,
            anchor_name="exact numpy float32 scan",
            target=ratio_at_most(1.5),
        ),
        Row(
            f"similar cards recall@10, {label}",
            run.held_out_recall * 100,
            "%",
            f"{run.held_out} texts held out of the index ask it; {run.queries} indexed cards asking for their "
            f"similar cards (the app's path, threshold applied) {run.app_overlap:.0%}"
            + (
                ""
                if realistic
                else "; random unit vectors have no near neighbours (the 10th nearest at cosine ~0.18), which "
                "a bit scan cannot tell apart: real-text cards are what the target is about"
            ),
            anchor=100,
            anchor_name="exact scan",
        ),
        Row(
            f"similar cards first query after start, {label}",
            cold,
            "ms",
            f"after the start-up warm-up (off the GUI thread, {warm:.0f} ms)",
            anchor=p50,
            anchor_name="later queries (p50)",
            target=ratio_at_most(2),
        ),
        Row(
            f"similar cards index memory, {label}",
            run.memory_mb,
            "MB",
            "SimHash bits + 8-bit codes + ids; the target is set for 100k cards",
            target=at_most(64),
        ),
    ]


SEARCHES = ("connection", "thread pool", "return value", "the", "ab", "zzzq", "zq", "데이터", "저장", "스레드 풀")


def bench_search(count: int = 100_000, rounds: int = 5, *, on: str = "SQLite") -> list[Row]:
    """Search on real-text cards as the Cards page asks it: the card's words, the scrap's words and meaning
    (the query encoded by the sentence encoder, its nearest cards among vectors of the encoder's shape),
    fused; the first page with its rows loaded. Against the card words' FTS5 ranking alone (the ids) and
    the substring scan it replaced, alternately in one run."""
    from san_desktop.ai import encoder
    from san_desktop.services.search import QueryVector, card_word_matches
    from tests.support.real_text import card_texts

    texts = card_texts(count)
    rng = np.random.default_rng(20261202)
    vectors = rng.standard_normal((count, encoder.SEMANTIC_DIMENSIONS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    model = encoder.SEMANTIC_EMBEDDING_MODEL
    encoder.warm_up()
    with temporary_data_dir() as directory:
        backend = start_backend(directory, kind="headless", log_to_stderr=False)
        with backend.db.engine.begin() as conn:  # one bulk write, no other writer
            _bulk_cards(conn, _bulk_scraps(conn, count, "search"), model, texts=texts, vectors=vectors)
        cards = CardService(backend.db, lambda query: QueryVector(model, encoder.encode([query])[0]))
        cards.list_cards(SEARCHES[0])  # the similar-card index loaded once, as the window's start-up does
        full, ranking, scan = [], [], []
        by_search: dict[str, list[float]] = {search: [] for search in SEARCHES}
        for _ in range(rounds):
            for search in SEARCHES:
                began = time.perf_counter()
                cards.list_cards(search)
                full.append((time.perf_counter() - began) * 1000)
                by_search[search].append(full[-1])
                began = time.perf_counter()
                with backend.db.sessions() as session:
                    card_word_matches(session, search, limit=200)
                ranking.append((time.perf_counter() - began) * 1000)
                pattern = f"%{search.split()[0]}%"
                began = time.perf_counter()
                with backend.db.engine.connect() as conn:
                    conn.execute(
                        sa.text(
                            "SELECT id FROM knowledge_cards WHERE title LIKE :pattern OR summary LIKE :pattern "
                            "ORDER BY id DESC LIMIT 200"
                        ),
                        {"pattern": pattern},
                    ).fetchall()
                scan.append((time.perf_counter() - began) * 1000)
        backend.close()
    per_query = ", ".join(f"{search!r} {median(times):.1f}" for search, times in by_search.items())
    return [
        Row(
            f"search p50 (words, scrap text, meaning), {count:,} real-text cards, {on}",
            median(full),
            "ms",
            f"first page with its rows, the query encoded; per query p50 {per_query}; "
            f"the LIKE scan it replaced {median(scan):.1f} ms",
            anchor=median(ranking),
            anchor_name=f"{'FTS5' if on == 'SQLite' else 'word'} ranking alone (ids)",
            target=at_most(15),
        ),
        Row(
            f"search p99 (words, scrap text, meaning), {count:,} real-text cards, {on}",
            percentile(full, 99),
            "ms",
            f"the LIKE scan it replaced {percentile(scan, 99):.1f} ms",
            anchor=percentile(ranking, 99),
            anchor_name=f"{'FTS5' if on == 'SQLite' else 'word'} ranking alone (ids)",
            target=at_most(40),
        ),
    ]


def run_all() -> list[Row]:
    return (
        bench_search()
        + bench_capture()
        + bench_similar(10_000)
        + bench_similar(100_000)
        + bench_similar(10_000, realistic=True)
        + bench_similar(100_000, realistic=True)
    )
