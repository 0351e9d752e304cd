"""TIL notes in search and in the cards' vector space: a published TIL is found by its words and by meaning;
an edit is indexed by a TIL_INDEXING job (and an edit made while that job ran is indexed after it); a TIL
of an earlier model or of before revision 0015 is indexed by the recovery sweep, and star ranking then sees
it in the new space."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import pytest
import sqlalchemy as sa

from san_desktop.ai.local import LocalProvider
from san_desktop.app import SanApp
from san_desktop.core.enums import JobPool, JobStatus, JobType
from san_desktop.db.models import AsyncJob, DailySummary, TilEmbedding
from san_desktop.services.recovery.hooks import stale_til_hook
from san_desktop.services.recovery.sweep import sweep
from san_desktop.services.search import BY_MEANING, IN_TIL
from tests.support.til import executor, finished_til, run_one

LONG_AGO = datetime(2000, 1, 1, tzinfo=UTC)
TEXTS = (
    "Raft elects a leader by majority vote; the leader replicates its log entries to the followers.",
    "SQLite in WAL mode lets readers continue while one writer appends to the write-ahead log.",
)


def _vector_row(app: SanApp, summary_id: str) -> TilEmbedding | None:
    with app.db.sessions() as session:
        row = session.get(TilEmbedding, summary_id)
        if row is not None:
            session.expunge(row)
        return row


def _summary_id(app: SanApp, day: str) -> str:
    return app.til.get(day).summary_id


def _indexing_jobs(app: SanApp, summary_id: str) -> list[JobStatus]:
    with app.db.sessions() as session:
        return list(
            session.scalars(
                sa.select(AsyncJob.status).where(
                    AsyncJob.job_type == JobType.TIL_INDEXING, AsyncJob.target_id == summary_id
                )
            )
        )


def test_a_published_til_is_found_by_its_words_and_its_meaning(app: SanApp) -> None:
    day = finished_til(app, TEXTS)
    summary_id = _summary_id(app, day)
    row = _vector_row(app, summary_id)
    assert row is not None
    assert row.model_id == app.providers.embedding_model()
    assert row.version == app.til.get(day).current_version  # indexed as it was published: no job needed
    assert _indexing_jobs(app, summary_id) == []
    (found,) = app.cards.search_tils("replicates")
    assert found.til.local_date == day
    assert IN_TIL in found.matched
    by_meaning = app.cards.search_tils("리더 선출과 로그 복제")  # Korean, no word of the note
    assert [item.til.local_date for item in by_meaning] == [day]
    assert by_meaning[0].matched == (BY_MEANING,)
    assert app.cards.search_tils("zebra crossing") == []


def test_an_edit_is_indexed_by_a_job_and_the_old_words_no_longer_find_the_day(app: SanApp) -> None:
    day = finished_til(app, TEXTS)
    summary_id = _summary_id(app, day)
    old = _vector_row(app, summary_id)
    assert old is not None
    version = app.til.save_edit(day, "# TIL\n\nThe zymurgy club brews beer from malted barley.", keep=3).value
    assert _indexing_jobs(app, summary_id) == [JobStatus.PENDING]
    assert run_one(app, JobType.TIL_INDEXING).status is JobStatus.COMPLETED
    row = _vector_row(app, summary_id)
    assert row is not None
    assert row.version == version
    assert row.vector != old.vector
    assert [item.til.local_date for item in app.cards.search_tils("zymurgy")] == [day]
    assert not [item for item in app.cards.search_tils("replicates") if IN_TIL in item.matched]


class _EditsWhileEmbedding(LocalProvider):
    """Saves an edit of the day while the indexing job embeds the text it read."""

    def __init__(self, app: SanApp, day: str) -> None:
        super().__init__(time_limit_seconds=None)
        self.app, self.day, self.edited = app, day, False

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not self.edited:
            self.edited = True
            self.app.til.save_edit(self.day, "# TIL\n\nAn edit made while the text was embedded: quokka.", keep=3)
        return super().embed(texts)


def test_an_edit_made_while_the_job_ran_is_indexed_after_it(app: SanApp, monkeypatch: pytest.MonkeyPatch) -> None:
    day = finished_til(app, TEXTS)
    summary_id = _summary_id(app, day)
    app.til.save_edit(day, "# TIL\n\nThe first edit: wombat.", keep=3)
    monkeypatch.setattr(app.providers, "_provider", _EditsWhileEmbedding(app, day))
    assert run_one(app, JobType.TIL_INDEXING).status is JobStatus.COMPLETED
    assert app.cards.search_tils("wombat") == []  # the older text was not indexed over the newer one
    assert _indexing_jobs(app, summary_id).count(JobStatus.PENDING) == 1  # asked again, for the newer text
    assert run_one(app, JobType.TIL_INDEXING).status is JobStatus.COMPLETED
    assert [item.til.local_date for item in app.cards.search_tils("quokka")] == [day]
    row = _vector_row(app, summary_id)
    assert row is not None
    assert row.version == app.til.get(day).current_version


def test_the_sweep_indexes_tils_of_another_model_or_never_indexed_and_stars_then_see_them(app: SanApp) -> None:
    first = finished_til(app, TEXTS)
    with app.db.write() as session:  # a library of before: one TIL of the hashed n-grams, one never indexed
        session.execute(sa.update(TilEmbedding).values(model_id="local-hashed-ngram-v1"))
        other = DailySummary(local_date="2026-01-05", title="Old day")
        session.add(other)
    model = app.providers.embedding_model()
    assert app.stars._tils(model, since=LONG_AGO) == []  # never compared across models
    report = sweep(app.queue, app.backend.require_session(), app.settings.jobs, hooks=[stale_til_hook(app.providers)])
    assert report.enqueued_by_hooks == 1  # the day with a text; a day without one has nothing to index
    executor(app).drain(JobPool.AI)
    row = _vector_row(app, _summary_id(app, first))
    assert row is not None
    assert row.model_id == model
    assert [title for title, _vector in app.stars._tils(model, since=LONG_AGO)] == [f"TIL of {first}"]
    again = sweep(app.queue, app.backend.require_session(), app.settings.jobs, hooks=[stale_til_hook(app.providers)])
    assert again.enqueued_by_hooks == 0
