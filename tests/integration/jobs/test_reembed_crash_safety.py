"""A library of hashed-n-gram cards moves to the sentence encoder by itself: the runner's sweep re-embeds
every card through jobs; killed (SIGKILL) halfway and started again, it ends with exactly one vector of
the new model per card, and meanwhile cards of the two models are never compared."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from san_desktop.ai import encoder
from san_desktop.ai.calibration import HASHED_EMBEDDING_MODEL, SEMANTIC_EMBEDDING_MODEL
from san_desktop.app import SanApp
from san_desktop.bootstrap import start_backend
from san_desktop.core.paths import database_path
from san_desktop.core.settings import Settings, save_settings
from tests.support.db import raw_connection
from tests.support.jobs import fast_settings
from tests.support.processes import child_env, marker_appears, run_san
from tests.support.til import cards_of

# reads the vectors of the SQLite file itself (its kill points are the file's)
pytestmark = pytest.mark.sqlite

CARDS = 60
KILLED_AFTER = 20
TOPICS = (
    "SQLite WAL mode lets readers go on while a writer commits; checkpoints copy pages back.",
    "React's useEffect runs after render; its cleanup runs before the next effect.",
    "Kafka consumer groups share a topic's partitions; each partition goes to one consumer.",
    "도커 이미지는 층을 쌓아 만들고 바뀌지 않은 층은 캐시에서 다시 쓴다.",
    "러스트의 소유권: 값에는 주인이 하나이고 주인이 범위를 벗어나면 값이 해제된다.",
)


def _models(data_dir: Path) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Each card's model, and the models of each card's stored vectors."""
    with raw_connection(database_path(data_dir)) as conn:
        cards = dict(conn.execute("SELECT id, embedding_model FROM knowledge_cards").fetchall())
        vectors: dict[str, list[str]] = {}
        for card_id, model in conn.execute("SELECT card_id, model_id FROM card_embeddings"):
            vectors.setdefault(card_id, []).append(model)
    return cards, vectors


@pytest.mark.slow
def _opened(data_dir: Path) -> SanApp:
    return SanApp(start_backend(data_dir, kind="gui", log_to_stderr=False))


def _close(app: SanApp) -> None:
    app.close()
    app.backend.close()  # the data folder is free for the runner's process


def test_a_move_to_the_new_model_killed_halfway_ends_with_one_new_vector_per_card(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir.mkdir(parents=True)
    save_settings(data_dir, Settings(jobs=fast_settings()))
    app = _opened(data_dir)
    with monkeypatch.context() as before_the_upgrade:  # the library as the hashed n-grams made it
        before_the_upgrade.setattr(encoder, "_failure", "not shipped yet")
        cards_of(app, [f"{TOPICS[n % len(TOPICS)]} (note {n})" for n in range(CARDS)])
    _close(app)
    cards, _vectors = _models(data_dir)
    assert len(cards) == CARDS
    assert set(cards.values()) == {HASHED_EMBEDDING_MODEL}

    marker = tmp_path / "card.reembedded.reached"
    runner = subprocess.Popen(
        [sys.executable, "-m", "san_desktop.cli.main", "jobs", "run", "--until-idle"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=child_env(SAN_FAILPOINTS=f"card.reembedded@{KILLED_AFTER}", SAN_FAILPOINT_DIR=str(tmp_path)),
    )
    try:
        assert marker_appears(marker, runner, 120), "the runner never re-embedded enough cards"
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait(30)

    cards, vectors = _models(data_dir)
    moved = {card_id for card_id, model in cards.items() if model == SEMANTIC_EMBEDDING_MODEL}
    assert KILLED_AFTER <= len(moved) < CARDS  # halfway
    assert all(len(models) == 1 for models in vectors.values())
    app = _opened(data_dir)
    try:
        for card_id in (next(iter(moved)), next(iter(set(cards) - moved))):
            found = app.cards.similar(card_id)
            assert found
            assert {cards[item.card.id] for item in found} == {cards[card_id]}  # never across the two spaces
            assert {item.model_id for item in found} == {cards[card_id]}
    finally:
        _close(app)

    finished = run_san("jobs", "run", "--until-idle", timeout=300)
    assert finished.returncode == 0, finished.stderr
    cards, vectors = _models(data_dir)
    assert set(cards.values()) == {SEMANTIC_EMBEDDING_MODEL}
    assert set(vectors) == set(cards)
    assert all(models == [SEMANTIC_EMBEDDING_MODEL] for models in vectors.values())
