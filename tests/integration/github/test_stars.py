"""Starred repositories against a GitHub-shaped server on 127.0.0.1: cheap syncs (Link pages, ETags, stop
at the first known star), the errors GitHub can give, and the ranking against the learner's cards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from san_desktop.app import SanApp
from san_desktop.core.enums import AttemptOutcome, JobStatus, JobType
from tests.support.github_server import TOKEN, FakeGitHub, Request
from tests.support.jobs import jobs_of
from tests.support.stars import STAR_CARDS, STAR_TOPICS, connected_github, learn_sqlite_and_react, star_topics
from tests.support.til import run_one


@pytest.fixture
def github(app: SanApp) -> Iterator[FakeGitHub]:
    with connected_github(app) as fake:
        yield fake


def _star_many(github: FakeGitHub, count: int) -> None:
    for n in range(count):
        github.star(f"owner{n}/repo{n}", f"Repository number {n}", ("misc",), language="Python", stargazers_count=n)


def _sync(app: SanApp, *, full: bool = False) -> JobStatus:
    app.stars.request_sync(app.settings.github.api_url, full=full, rank=False)
    return run_one(app, JobType.GITHUB_STAR_SYNC).status


def _learned_synced_and_ranked(app: SanApp, github: FakeGitHub) -> None:
    """Cards on SQLite and React, stars on several topics, synced and ranked once."""
    learn_sqlite_and_react(app)
    star_topics(github)
    app.refresh_stars()
    run_one(app, JobType.GITHUB_STAR_SYNC)
    run_one(app, JobType.GITHUB_STAR_RECOMMENDATION)


def _star_gets(github: FakeGitHub, since: int) -> list[Request]:
    return [r for r in github.requests[since:] if r.path == "/user/starred"]


def test_syncs_follow_links_ask_conditionally_and_stop_at_what_is_known(app: SanApp, github: FakeGitHub) -> None:
    _star_many(github, 250)
    assert _sync(app) is JobStatus.COMPLETED
    first = _star_gets(github, 0)
    assert app.stars.status().repositories == 250
    assert len(first) == 3  # three pages of 100, each found through the Link header
    assert all(r.headers.get("Accept") == "application/vnd.github.star+json" for r in first)

    before, synced = len(github.requests), app.stars.status().last_sync
    assert synced is not None
    assert _sync(app) is JobStatus.COMPLETED
    resynced = app.stars.status().last_sync
    assert resynced is not None
    assert resynced > synced  # a 304 is a sync too
    second = _star_gets(github, before)
    assert len(second) == 1  # the first page did not change: nothing newer exists
    assert all(r.headers.get("If-None-Match") for r in second)

    github.star("sqlite/new-one", "A new star")
    before = len(github.requests)
    assert _sync(app) is JobStatus.COMPLETED
    assert app.stars.status().repositories == 251
    assert len(_star_gets(github, before)) == 1  # its page held a known star: no further page asked

    github.starred = [item for item in github.starred if item["repo"]["full_name"] != "owner7/repo7"]  # unstarred
    before = len(github.requests)
    assert _sync(app, full=True) is JobStatus.COMPLETED
    full = _star_gets(github, before)
    assert len(full) == 3
    assert all(r.headers.get("If-None-Match") for r in full)
    assert app.stars.status().repositories == 250  # owner7/repo7 is gone


def test_a_rejected_token_ends_the_sync_saying_so(app: SanApp, github: FakeGitHub) -> None:
    github.next_starred = ["401"]
    _star_many(github, 3)
    assert _sync(app) is JobStatus.FAILED
    (job,) = jobs_of(app.queue, JobType.GITHUB_STAR_SYNC)
    assert "rejected the token" in (job.error_message or "")
    assert TOKEN not in (job.error_message or "")


def test_a_spent_rate_limit_waits_for_its_reset_without_spending_an_attempt(app: SanApp, github: FakeGitHub) -> None:
    github.next_starred = ["ratelimit"]
    _star_many(github, 3)
    assert _sync(app) is JobStatus.PENDING
    (job,) = jobs_of(app.queue, JobType.GITHUB_STAR_SYNC)
    assert job.attempts == 0
    assert job.run_after is not None
    assert (job.run_after - app.clock()).total_seconds() > 60  # the reset, two minutes away
    (attempt,) = app.queue.attempts(job.id)
    assert attempt.outcome is AttemptOutcome.RATE_LIMITED


def test_the_top_recommendations_match_what_is_being_learned(app: SanApp, github: FakeGitHub) -> None:
    learn_sqlite_and_react(app)
    star_topics(github)
    app.refresh_stars()
    run_one(app, JobType.GITHUB_STAR_SYNC)
    assert run_one(app, JobType.GITHUB_STAR_RECOMMENDATION).status is JobStatus.COMPLETED

    ranked = app.stars.latest(limit=15)
    assert len(ranked) == 15
    cards, _revision = app.til.collect(app.til.today())
    for recommendation in ranked[:5]:
        topic = recommendation.full_name.split("-")[0]
        assert topic in ("sqlite", "react"), recommendation.full_name
        # the reason names the matching cards, and the best of them is about the same topic
        named = [card.title for card in cards if f"“{card.title}”" in recommendation.reason]
        assert named, recommendation.reason
        assert {"sqlite": "SQLite", "react": "React"}[topic] in named[0] + recommendation.reason.split("”")[0]


def test_not_interested_hides_a_repository_from_this_and_later_runs(app: SanApp, github: FakeGitHub) -> None:
    _learned_synced_and_ranked(app, github)
    top = app.stars.latest(limit=1)[0]

    app.set_not_interested(top.repository_id)
    assert top.repository_id not in {r.repository_id for r in app.stars.latest()}
    app.refresh_stars()
    run_one(app, JobType.GITHUB_STAR_SYNC)
    run_one(app, JobType.GITHUB_STAR_RECOMMENDATION)
    assert top.repository_id not in {r.repository_id for r in app.stars.latest()}
    rankings = jobs_of(app.queue, JobType.GITHUB_STAR_RECOMMENDATION)
    assert len(rankings) == 2
    assert set(app.job_labels(rankings).values()) == {"Your GitHub stars"}  # as the job monitor names them


def test_archived_repositories_rank_last(app: SanApp, github: FakeGitHub) -> None:
    learn_sqlite_and_react(app)
    github.star("sqlite-org/old-sqlite-tool", STAR_TOPICS["sqlite"][0], ("sqlite",), archived=True)
    star_topics(github)
    app.refresh_stars()
    run_one(app, JobType.GITHUB_STAR_SYNC)
    run_one(app, JobType.GITHUB_STAR_RECOMMENDATION)
    ranked = app.stars.latest(limit=100)
    assert ranked[-1].full_name == "sqlite-org/old-sqlite-tool"
    assert ranked[-1].reason.endswith("(archived)")


def test_without_a_token_refresh_says_where_to_set_one(app: SanApp) -> None:
    from san_desktop.core.errors import SanError

    with pytest.raises(SanError, match="No GitHub token"):
        app.refresh_stars()


def test_a_run_with_nothing_to_rank_against_shows_nothing_rather_than_an_old_run(
    app: SanApp, github: FakeGitHub
) -> None:
    _learned_synced_and_ranked(app, github)
    assert app.stars.latest()
    for scrap in app.scraps.list_scraps():
        app.delete_scrap(scrap.id)  # no card left to rank against
    app.refresh_stars()
    run_one(app, JobType.GITHUB_STAR_SYNC)
    assert run_one(app, JobType.GITHUB_STAR_RECOMMENDATION).status is JobStatus.COMPLETED
    assert app.stars.latest() == []


def test_recent_tils_count_as_what_is_being_learned(app: SanApp, github: FakeGitHub) -> None:
    from tests.support.til import finished_til

    day = finished_til(app, STAR_CARDS[:2])
    titles, vectors, card_count = app.stars._cards(app.providers.embedding_model(), window_days=30)
    assert titles[card_count:] == [f"TIL of {day}"]  # after the cards, known as a TIL
    assert vectors.shape[0] == len(titles) == 3  # two cards and the day's TIL
    github.star("sqlite-org/sqlite-tool", STAR_TOPICS["sqlite"][0], ("sqlite",))
    app.refresh_stars()
    run_one(app, JobType.GITHUB_STAR_SYNC)
    assert run_one(app, JobType.GITHUB_STAR_RECOMMENDATION).status is JobStatus.COMPLETED
    (only,) = app.stars.latest()
    assert only.reason.endswith(f" and your TIL of {day}")  # a TIL is named as a TIL, never as a card
    assert only.reason.startswith("Close to your card “")


def test_stars_of_another_model_are_embedded_again_by_a_ranking_the_sweep_asks_for(
    app: SanApp, github: FakeGitHub
) -> None:
    import sqlalchemy as sa

    from san_desktop.db.models import StarredRepository
    from san_desktop.services.recovery.hooks import moved_stars_hook
    from san_desktop.services.recovery.sweep import sweep

    _learned_synced_and_ranked(app, github)
    model = app.providers.embedding_model()
    hooks = [moved_stars_hook(app.providers, app.services)]

    def sweep_asks() -> int:
        return sweep(app.queue, app.backend.require_session(), app.settings.jobs, hooks=hooks).enqueued_by_hooks

    assert sweep_asks() == 0  # every star is in this model's space already
    with app.db.write() as session:  # a library of before the sentence encoder
        session.execute(sa.update(StarredRepository).values(embedding_model="local-hashed-ngram-v1"))
    assert sweep_asks() == 1
    assert sweep_asks() == 0  # one waits already
    assert run_one(app, JobType.GITHUB_STAR_RECOMMENDATION).status is JobStatus.COMPLETED
    with app.db.sessions() as session:
        assert set(session.scalars(sa.select(StarredRepository.embedding_model))) == {model}
    assert app.stars.latest()
    assert sweep_asks() == 0
