"""Cards: get-or-create of categories and tags, similar cards in one embedding space, re-embedding."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import sqlalchemy as sa

from san_desktop.ai.base import CardDraft
from san_desktop.ai.encoder import embedding_model as local_embedding_model
from san_desktop.ai.factory import ProviderSource
from san_desktop.ai.local import LocalProvider
from san_desktop.bootstrap import Backend
from san_desktop.core.settings import AISettings
from san_desktop.db.models import AsyncJob, Category, KnowledgeCard, Tag
from san_desktop.db.vectors import warm_up
from san_desktop.queue.store import JobStore
from san_desktop.services.cards import (
    FALLBACK_NEAREST,
    CardNotFoundError,
    CardService,
    save_card,
    similar_cards,
)
from san_desktop.services.recovery.hooks import stale_embedding_hook
from san_desktop.services.recovery.sweep import sweep
from san_desktop.services.scraps import ScrapService
from tests.support.jobs import jobs_of
from tests.support.local_jobs import run_all_jobs


def _cards(backend: Backend) -> CardService:
    return CardService(backend.db)


TEXTS = {
    "wal": "SQLite WAL mode lets readers continue while a writer commits. Checkpoints copy pages back.",
    "wal2": "Write-ahead logging in SQLite: a checkpoint moves WAL pages into the database file.",
    "vacuum": "PostgreSQL VACUUM removes dead row versions that MVCC leaves behind.",
    "react": "React useEffect runs after render; a wrong dependency array causes endless re-renders.",
    "docker": "Docker multi-stage builds keep images small: build in one stage, copy the binary out.",
    "pie": "Grandma's apple pie needs butter, flour, apples and cinnamon.",
}


@pytest.fixture
def cards_by_key(backend: Backend, queue: JobStore) -> dict[str, str]:
    scraps = ScrapService(backend.db, queue)
    scrap_ids = {key: scraps.capture(text).scrap_id for key, text in TEXTS.items()}
    run_all_jobs(queue, backend.require_session())
    found = {key: _cards(backend).card_id_for_scrap(scrap_id) for key, scrap_id in scrap_ids.items()}
    assert all(found.values())
    return {key: card_id for key, card_id in found.items() if card_id}


def test_related_cards_come_first(backend: Backend, cards_by_key: dict[str, str]) -> None:
    similar = similar_cards(backend.db, cards_by_key["wal"])
    keys = {card_id: key for key, card_id in cards_by_key.items()}
    ranked = [keys[item.card.id] for item in similar]
    assert ranked[0] == "wal2"
    assert "wal" not in ranked  # never itself
    assert all(a.distance <= b.distance for a, b in itertools.pairwise(similar))


def test_threshold_then_fallback_to_nearest(backend: Backend, cards_by_key: dict[str, str]) -> None:
    strict = similar_cards(backend.db, cards_by_key["wal"], threshold=0.0001, limit=10)
    assert len(strict) == FALLBACK_NEAREST  # nothing passes: only the few nearest instead, marked so
    assert not strict[0].within_threshold
    assert all(0.0 <= item.score <= 1.0 for item in strict)
    loose = similar_cards(backend.db, cards_by_key["wal"], threshold=2.0, limit=10)
    assert len(loose) == len(TEXTS) - 1
    assert all(item.within_threshold for item in loose)


def test_vectors_of_another_model_are_never_compared(backend: Backend, cards_by_key: dict[str, str]) -> None:
    with backend.db.write() as session:
        other = LocalProvider().embed([TEXTS["wal2"]])[0]
        from san_desktop.services.cards import save_embedding

        save_embedding(session, cards_by_key["wal2"], "another-model", other)
    keys = {card_id: key for key, card_id in cards_by_key.items()}
    ranked = [keys[item.card.id] for item in similar_cards(backend.db, cards_by_key["wal"], 2.0)]
    assert "wal2" not in ranked
    assert similar_cards(backend.db, cards_by_key["wal2"], 2.0) == []  # alone in its space


def test_deleted_scraps_cards_disappear(backend: Backend, queue: JobStore, cards_by_key: dict[str, str]) -> None:
    detail = _cards(backend).get(cards_by_key["wal2"])
    ScrapService(backend.db, queue).delete(detail.card.scrap_id)
    assert cards_by_key["wal2"] not in {c.id for c in _cards(backend).list_cards()}
    keys = [item.card.id for item in similar_cards(backend.db, cards_by_key["wal"], 2.0)]
    assert cards_by_key["wal2"] not in keys
    with pytest.raises(CardNotFoundError):
        _cards(backend).get(cards_by_key["wal2"])


def test_search(backend: Backend, cards_by_key: dict[str, str]) -> None:
    found = {c.id for c in _cards(backend).list_cards("sqlite")}
    assert cards_by_key["wal"] in found
    assert cards_by_key["react"] not in found
    assert {c.id for c in _cards(backend).list_cards("databases")} >= {cards_by_key["wal"], cards_by_key["vacuum"]}
    assert _cards(backend).list_cards("zzz-nothing") == []


def test_categories_and_tags_are_shared_case_insensitively(backend: Backend, queue: JobStore) -> None:
    scraps = ScrapService(backend.db, queue)
    one = scraps.capture("first").scrap_id
    two = scraps.capture("second").scrap_id
    vector = np.ones(8, dtype=np.float32) / np.sqrt(8)
    with backend.db.write() as session:
        save_card(session, one, CardDraft("A", "a.", ("SQLite", "wal"), "Databases"), "m", vector)
        save_card(session, two, CardDraft("B", "b.", ("sqlite", "WAL", "index"), "databases"), "m", vector)
        save_card(session, one, CardDraft("A2", "a.", ("SQLITE",), "Databases"), "m", vector)  # re-run
    with backend.db.sessions() as session:
        assert session.scalar(sa.select(sa.func.count()).select_from(Tag)) == 3
        assert session.scalar(sa.select(sa.func.count()).select_from(Category)) == 1
        assert session.scalar(sa.select(sa.func.count()).select_from(KnowledgeCard)) == 2


def test_changing_the_embedding_model_re_embeds_cards_through_jobs(
    backend: Backend, queue: JobStore, cards_by_key: dict[str, str], job_settings: object
) -> None:
    with backend.db.write() as session:
        session.execute(sa.update(KnowledgeCard).values(embedding_model="old-model"))
    providers = ProviderSource(AISettings())
    report = sweep(queue, backend.require_session(), job_settings, hooks=[stale_embedding_hook(providers)])  # type: ignore[arg-type]
    assert report.enqueued_by_hooks == len(TEXTS)
    assert all('"embed_only": true' in (job.payload or "") for job in jobs_of(queue) if job.status.value == "PENDING")
    run_all_jobs(queue, backend.require_session(), providers)
    with backend.db.sessions() as session:
        models = set(session.scalars(sa.select(KnowledgeCard.embedding_model)))
    assert models == {local_embedding_model()}
    assert similar_cards(backend.db, cards_by_key["wal"])


def test_a_failed_re_embedding_is_not_retried_by_every_sweep(
    backend: Backend, queue: JobStore, cards_by_key: dict[str, str], job_settings: object
) -> None:
    with backend.db.write() as session:
        session.execute(sa.update(KnowledgeCard).values(embedding_model="old-model"))
    hooks = [stale_embedding_hook(ProviderSource(AISettings()))]
    assert sweep(queue, backend.require_session(), job_settings, hooks=hooks).enqueued_by_hooks == len(TEXTS)  # type: ignore[arg-type]
    with backend.db.write() as session:  # the AI server said no, for good
        session.execute(sa.update(AsyncJob).where(AsyncJob.status == "PENDING").values(status="FAILED"))
    assert sweep(queue, backend.require_session(), job_settings, hooks=hooks).enqueued_by_hooks == 0  # type: ignore[arg-type]


def test_the_similar_card_index_can_be_loaded_ahead_of_use(backend: Backend, cards_by_key: dict[str, str]) -> None:
    with backend.db.engine.connect() as conn:
        assert warm_up(conn, local_embedding_model()) == len(TEXTS)
        assert warm_up(conn, "a-model-without-cards") == 0


SEARCH_CORPUS = [
    ("SQLite WAL mode", "Readers continue while a writer commits.", ("sqlite", "wal"), "Databases"),
    ("Write-ahead logging", "A checkpoint copies pages back; 100% durable after fsync.", ("sqlite",), "Databases"),
    ("PostgreSQL VACUUM", "Removes dead row_versions left by MVCC.", ("postgres",), "Databases"),
    ("React useEffect", "Runs after render; a wrong dependency array loops.", ("react", "js"), "Frontend"),
    ("파이썬 제너레이터", "yield 로 값을 하나씩 돌려준다. 메모리를 아낀다.", ("파이썬",), "프로그래밍"),
    ("도커 빌드", "멀티 스테이지 빌드로 이미지를 작게 만든다.", ("docker",), "인프라"),
    ('Quoting "FTS"', "Double quotes and the word AND or NEAR must not break the query.", ("fts",), "Databases"),
]
SEARCHES = [
    "sqlite",
    "SQLITE wal",
    "databases",
    "write-ahead",
    "100%",
    "row_versions",
    "row%",
    "파이썬",
    "이썬",
    "빌드 이미지",
    "도",
    "js",
    "a",
    '"fts"',
    "AND",
    "near",
    "quotes and",
    "frontend react",
    "zzz",
    "%",
    "_",
    # two-letter words go through the trigrams they start, at the end of a value too
    "빌드",
    "드로",
    "ql",
    "QL wal",
    "ct",
    "js react",
    "ab",
    '"f',
    "0%",
    "a ql",
]


def _reference(search: str) -> set[int]:
    """The plain definition: every word occurs, ignoring ASCII case, in the title, summary, a tag or the category."""
    found = set()
    for index, (title, summary, tags, category) in enumerate(SEARCH_CORPUS):
        fields = [title, summary, *tags, category]
        if all(any(word.lower() in field.lower() for field in fields) for word in search.split()):
            found.add(index)
    return found


def test_full_text_search_agrees_with_plain_substring_matching(backend: Backend, queue: JobStore) -> None:
    scraps = ScrapService(backend.db, queue)
    # texts with no word of any search: what is found is found in the card's fields (test_search.py
    # covers the scrap's text)
    scrap_ids = [scraps.capture(f"memo {'x' * (index + 1)}").scrap_id for index in range(len(SEARCH_CORPUS))]
    vector = np.ones(8, dtype=np.float32) / np.sqrt(8)
    with backend.db.write() as session:
        for scrap_id, (title, summary, tags, category) in zip(scrap_ids, SEARCH_CORPUS, strict=True):
            save_card(session, scrap_id, CardDraft(title, summary, tags, category), "m", vector)
    index_of = {_cards(backend).card_id_for_scrap(scrap_id): index for index, scrap_id in enumerate(scrap_ids)}
    for search in SEARCHES:
        found = {index_of[card.id] for card in _cards(backend).list_cards(search)}
        assert found == _reference(search), search
        by_scrap = _cards(backend).cards_of_scraps(scrap_ids[:4], search)
        assert {index_of[card.id] for card in by_scrap.values()} == _reference(search) & {0, 1, 2, 3}, search
    assert _cards(backend).cards_of_scraps([], "sqlite") == {}


def test_full_text_search_follows_edits_tags_and_deletions(backend: Backend, queue: JobStore) -> None:
    scraps = ScrapService(backend.db, queue)
    scrap_id = scraps.capture("a scrap").scrap_id
    vector = np.ones(8, dtype=np.float32) / np.sqrt(8)
    with backend.db.write() as session:
        card_id = save_card(session, scrap_id, CardDraft("Alpha topic", "first.", ("oldtag",), "Misc"), "m", vector)
    assert [c.id for c in _cards(backend).list_cards("oldtag")] == [card_id]
    with backend.db.write() as session:  # re-analysis replaces title, tags and category
        save_card(session, scrap_id, CardDraft("Beta topic", "second.", ("newtag",), "Other"), "m", vector)
    assert _cards(backend).list_cards("oldtag") == []
    assert _cards(backend).list_cards("alpha") == []
    assert _cards(backend).list_cards("Misc") == []
    assert [c.id for c in _cards(backend).list_cards("newtag beta other")] == [card_id]
    scraps.delete(scrap_id)
    assert _cards(backend).list_cards("beta") == []


def test_the_best_title_match_comes_first(backend: Backend, queue: JobStore) -> None:
    scraps = ScrapService(backend.db, queue)
    first, second = scraps.capture("one").scrap_id, scraps.capture("two").scrap_id
    vector = np.ones(8, dtype=np.float32) / np.sqrt(8)
    with backend.db.write() as session:
        in_summary = save_card(session, first, CardDraft("Other", "about kubernetes pods", (), "Ops"), "m", vector)
        in_title = save_card(session, second, CardDraft("Kubernetes pods", "scheduling", (), "Ops"), "m", vector)
    assert [c.id for c in _cards(backend).list_cards("kubernetes")] == [in_title, in_summary]
    assert _cards(backend).list_cards("kubernetes", before_id=in_summary) == []
