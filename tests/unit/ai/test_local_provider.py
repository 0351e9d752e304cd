"""The embedded provider on English and Korean scraps: sensible tags, categories and similarity."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from san_desktop.ai.base import DEFAULT_CATEGORIES, CardDraft, finalize_draft
from san_desktop.ai.encoder import SEMANTIC_DIMENSIONS
from san_desktop.ai.local import LOCAL_DIMENSIONS, LocalProvider, hashed_embed
from san_desktop.ai.wordclass import strip_korean_particle

ENGLISH = (
    "SQLite WAL mode lets readers continue while a writer commits.\n"
    "In WAL mode, changes are appended to a separate write-ahead log. A checkpoint moves pages back into "
    "the database file. Set synchronous=NORMAL with WAL for speed."
)
KOREAN = (
    "리액트 훅은 함수 컴포넌트에서 상태를 관리하게 해준다.\n"
    "useState 훅은 컴포넌트의 상태를 선언한다. useEffect는 렌더링 이후에 부수 효과를 실행한다. "
    "의존성 배열을 잘못 지정하면 무한 렌더링이 발생할 수 있다."
)


def test_english_scrap_gets_technical_tags_and_its_category() -> None:
    card = LocalProvider().analyze_card(ENGLISH, DEFAULT_CATEGORIES)
    assert card.category == "Databases"
    assert {"SQLite", "WAL"} <= set(card.tags)
    assert len(card.tags) <= 5
    assert card.title.startswith("SQLite WAL mode")
    assert len(card.title) <= 60
    assert 1 <= card.summary.count(".") <= 3


def test_korean_scrap_gets_tags_without_particles() -> None:
    card = LocalProvider().analyze_card(KOREAN, DEFAULT_CATEGORIES)
    assert card.category == "Frontend"
    assert {"컴포넌트", "상태"} <= set(card.tags)
    assert not any(tag.endswith(("은", "는", "을", "를", "의")) and len(tag) > 1 for tag in card.tags)
    assert len(card.title) <= 20


def test_particles_are_stripped() -> None:
    assert strip_korean_particle("컴포넌트에서") == "컴포넌트"
    assert strip_korean_particle("데이터베이스의") == "데이터베이스"
    assert strip_korean_particle("훅은") == "훅"
    assert strip_korean_particle("리액트") == "리액트"


def test_unknown_topics_fall_back_to_other() -> None:
    card = LocalProvider().analyze_card("Grandma's apple pie: butter, flour, apples, cinnamon.", DEFAULT_CATEGORIES)
    assert card.category == "Other"


def test_limits_are_enforced_on_any_answer() -> None:
    draft = CardDraft(
        "#" + "아주 긴 한국어 제목입니다 " * 5, "One. Two. Three. Four.", tuple(f"t{i}" for i in range(9)), "databases"
    )
    final = finalize_draft(draft, DEFAULT_CATEGORIES)
    assert len(final.title) <= 20
    assert final.summary == "One. Two. Three."
    assert len(final.tags) == 5
    assert final.category == "Databases"


def test_embeddings_are_normalised_and_stable_across_processes() -> None:
    vectors = LocalProvider().embed([ENGLISH, KOREAN, ""])
    assert vectors.shape == (3, SEMANTIC_DIMENSIONS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    hashed = hashed_embed([ENGLISH, KOREAN, ""])
    assert hashed.shape == (3, LOCAL_DIMENSIONS)
    assert np.allclose(np.linalg.norm(hashed[:2], axis=1), 1.0)
    code = (
        "from san_desktop.ai.local import LocalProvider, hashed_embed; import sys, numpy; "
        "sys.stdout.write(numpy.concatenate([LocalProvider().embed([sys.argv[1]]), "
        "hashed_embed([sys.argv[1]])], axis=1).tobytes().hex())"
    )
    other = subprocess.run([sys.executable, "-c", code, ENGLISH], capture_output=True, text=True, check=True)
    there = np.frombuffer(bytes.fromhex(other.stdout), dtype=np.float32)
    # the encoder's sums may run in another order on other BLAS threads; the n-grams are crc32, not the
    # salted hash(): the same bits
    assert np.allclose(there[:SEMANTIC_DIMENSIONS], vectors[0], atol=1e-5)
    assert there[SEMANTIC_DIMENSIONS:].tobytes() == hashed[0].tobytes()


def test_related_texts_are_nearer_than_unrelated_ones() -> None:
    texts = {
        "wal": ENGLISH,
        "wal2": "SQLite write-ahead logging (WAL): readers and a writer at once; checkpoints copy pages back.",
        "vacuum": "PostgreSQL VACUUM removes dead row versions left by MVCC; autovacuum runs it in the background.",
        "react": KOREAN,
        "react2": "리액트 useEffect 훅은 렌더링 후에 실행되고, 컴포넌트 상태가 바뀌면 다시 렌더링된다.",
        "pie": "Grandma's apple pie: butter, flour, apples and cinnamon, baked for an hour.",
    }
    keys = list(texts)
    vectors = LocalProvider().embed(list(texts.values()))
    similarity = vectors @ vectors.T

    def ranking(key: str) -> list[str]:
        row = similarity[keys.index(key)]
        return [keys[i] for i in np.argsort(-row) if keys[i] != key]

    assert ranking("wal")[0] == "wal2"
    assert ranking("react")[0] == "react2"
    assert ranking("wal").index("pie") > ranking("wal").index("vacuum")
    assert ranking("react2")[0] == "react"


def test_the_vector_made_for_the_category_is_the_cards_vector_not_encoded_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from san_desktop.ai import encoder
    from san_desktop.ai.base import embedding_text

    calls: list[int] = []
    encode = encoder.encode

    def counted(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        calls.append(len(texts))
        return encode(texts)

    monkeypatch.setattr(encoder, "encode", counted)
    provider = LocalProvider()
    draft = provider.analyze_card(ENGLISH, DEFAULT_CATEGORIES)
    card_text = embedding_text(draft.title, draft.summary, draft.tags, ENGLISH)
    vector = provider.embed([card_text])
    assert calls == [1]  # the analysis made it; the embedding took it
    assert np.allclose(vector[0], encode([card_text])[0], atol=1e-6)
    provider.embed([card_text])
    assert calls == [1, 1]  # taken once: asked again, it is encoded again
