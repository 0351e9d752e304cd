"""A false OX statement of the embedded provider swaps a key term for the other cards' term nearest to it in
meaning: plausible (another database for SQLite), never a term of another field, never a fragment."""

from __future__ import annotations

import zlib

from san_desktop.ai.base import TilCard
from san_desktop.ai.quizzes import OX_FALSE, local_quizzes
from san_desktop.core.enums import QuizType


def _card(card_id: str, title: str, summary: str, tags: tuple[str, ...], category: str) -> TilCard:
    return TilCard(card_id, title, summary, tags, category, None)


def _false_statement_id() -> str:
    """A card id whose statement the provider makes false (it decides by the id, so re-runs agree)."""
    return next(f"card-{n}" for n in range(100) if zlib.crc32(f"card-{n}".encode()) % 2)


def test_a_false_statement_swaps_in_the_nearest_term_in_meaning() -> None:
    wal = _card(
        _false_statement_id(),
        "SQLite WAL mode",
        "SQLite keeps a write-ahead log so readers continue while a writer commits. Checkpoints copy pages back.",
        ("SQLite",),
        "Databases",
    )
    others = [
        _card("k8s", "Readiness probes", "Kubernetes readiness probes decide when a pod gets traffic.",
              ("Kubernetes",), "DevOps"),
        _card("react", "React effects", "React runs useEffect after render; the cleanup runs first next time.",
              ("React",), "Frontend"),
        _card("docker", "Layer cache", "Docker reuses cached layers until a line of the Dockerfile changes.",
              ("Docker",), "DevOps"),
        _card("kafka", "Consumer groups", "Kafka gives each partition of a topic to one consumer of a group.",
              ("Kafka",), "Backend"),
        _card("pg", "PostgreSQL MVCC", "PostgreSQL keeps old row versions until VACUUM removes them.",
              ("PostgreSQL",), "Databases"),
    ]  # fmt: skip
    drafts = local_quizzes([wal, *others], [QuizType.OX])
    (statement,) = [draft for draft in drafts if draft.card_id == wal.card_id]
    assert statement.answer == OX_FALSE
    assert statement.question.startswith("PostgreSQL keeps a write-ahead log")
    assert statement.question.endswith(".")  # a whole sentence of the card, not a fragment
