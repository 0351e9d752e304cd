"""Starred-repository recommendations: the learner's GitHub stars synced cheaply (conditional requests,
pages followed by their ``Link`` header, stopping at the first star already known), then ranked against
what they are learning now (their recent cards and TILs) by vector similarity, each with a reason naming the cards
it matches. Each ranking run is stored; the latest one is what is shown."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

import numpy as np
import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.ai.base import AIProvider
from san_desktop.ai.calibration import score_of
from san_desktop.core.enums import ACTIVE_JOB_STATUSES, JobStatus, JobType
from san_desktop.core.errors import SanError
from san_desktop.core.timeutil import utcnow
from san_desktop.db.database import Database
from san_desktop.db.models import (
    AsyncJob,
    CardEmbedding,
    HttpCache,
    KnowledgeCard,
    Scrap,
    StarRecommendation,
    StarredRepository,
)
from san_desktop.db.vectors import from_stored, to_stored
from san_desktop.queue.payloads import StarSyncPayload, dump_payload
from san_desktop.queue.records import JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.services.changes import Changes
from san_desktop.services.til_index import til_vectors

FIRST_PAGE = "github:user/starred"  # the cache key of the first page (later pages: the URL GitHub gave)
EMBED_BATCH = 64
RANK_CHUNK = 1000  # repositories scored against the cards at a time
KEPT_PER_RUN = 200
FALLBACK_CARDS = 500  # no card in the window: the newest ones stand in
RUNS_KEPT = 3  # earlier ranking runs kept beside the newest
ARCHIVED = "archived"


def account_id(api_url: str) -> str:
    """A stable id of the linked GitHub (or GitHub Enterprise) account's host: the jobs' target."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, api_url.rstrip("/")))


class StarPages(Protocol):
    def starred_page(self, url: str | None = None, etag: str | None = None) -> Any: ...


@dataclass
class SyncReport:
    pages: int = 0
    not_modified: int = 0
    added: int = 0
    updated: int = 0
    gone: int = 0
    stopped_at_known: bool = False


@dataclass(frozen=True)
class Recommendation:
    repository_id: str
    full_name: str
    description: str
    language: str | None
    topics: tuple[str, ...]
    stars: int
    html_url: str
    archived: bool
    rank: int
    score: float
    reason: str


@dataclass(frozen=True)
class StarsStatus:
    repositories: int  # starred and not gone
    last_sync: datetime | None
    last_ranking: datetime | None
    languages: tuple[str, ...] = field(default=())


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def repository_text(repo: StarredRepository) -> str:
    """What a repository is embedded from: its name, description and topics."""
    owner_name = repo.full_name.replace("/", " ").replace("-", " ").replace("_", " ")
    return " ".join((owner_name, repo.description or "", " ".join(json.loads(repo.topics or "[]"))))


class StarService:
    def __init__(
        self,
        db: Database,
        queue: JobStore,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.db = db
        self.queue = queue
        self.clock = clock

    # --- asking for work ----------------------------------------------------------------------

    def request_sync(self, api_url: str, *, full: bool = False, rank: bool = True) -> JobRecord:
        """Sync (then rank) the stars of the account at ``api_url``; the running sync's job if one runs."""
        with self.db.write() as session:
            payload = dump_payload(StarSyncPayload(full, rank))
            return self.queue.active_or_enqueue(session, JobType.GITHUB_STAR_SYNC, account_id(api_url), payload=payload)

    def request_ranking(self, session: Session, account: str) -> JobRecord:
        return self.queue.active_or_enqueue(session, JobType.GITHUB_STAR_RECOMMENDATION, account)

    # --- sync ---------------------------------------------------------------------------------

    def sync(
        self, client: StarPages, *, full: bool = False, on_page: Callable[[int], None] | None = None
    ) -> SyncReport:
        """Fetch starred repositories page by page: each page asked with its last ETag (a 304 page is as
        it was); an incremental sync stops at a page that did not change or at the first star already
        known; a full one walks every page and marks repositories no page lists any more as gone."""
        report = SyncReport()
        seen: set[str] = set()
        url: str | None = None
        complete = False
        while True:
            key = url or FIRST_PAGE
            with self.db.sessions() as session:
                cached = session.get(HttpCache, key)
                etag = cached.etag if cached is not None else None
                remembered = json.loads(cached.items) if cached is not None else {}
            page = client.starred_page(url, etag)
            report.pages += 1
            if on_page is not None:
                on_page(report.pages)
            if page.not_modified:
                report.not_modified += 1
                with self.db.write() as session:  # asked and found as it was: synced now all the same
                    session.execute(sa.update(HttpCache).where(HttpCache.url == key).values(fetched_at=self.clock()))
                seen.update(remembered.get("names", []))
                next_url = remembered.get("next")
                if not full:
                    break  # a new star would have changed the first page
            else:
                names, known = self._store_page(page.items, report)
                seen.update(names)
                next_url = page.next_url
                with self.db.write() as session:
                    session.merge(
                        HttpCache(
                            url=key,
                            etag=page.etag or "",
                            items=json.dumps({"names": names, "next": next_url}),
                            fetched_at=self.clock(),
                        )
                    )
                if known and not full:
                    report.stopped_at_known = True
                    break
            if not next_url:
                complete = True
                break
            url = next_url
        if full and complete:
            report.gone = self._mark_gone(seen)
        return report

    def _store_page(self, items: Sequence[dict[str, Any]], report: SyncReport) -> tuple[list[str], bool]:
        """Upsert a page's repositories; their names, and whether one was known already (same star)."""
        names: list[str] = []
        known_star = False
        now = self.clock()
        entries = [
            (item, repo)
            for item in items
            if isinstance(item, dict)
            for repo in [item.get("repo", item)]
            if isinstance(repo, dict) and repo.get("full_name")
        ]
        with self.db.write() as session:
            wanted = [str(repo["full_name"]) for _item, repo in entries]
            known = {  # the page's repositories already stored, in one query
                row.full_name: row
                for row in session.scalars(sa.select(StarredRepository).where(StarredRepository.full_name.in_(wanted)))
            }
            for item, repo in entries:
                name = str(repo["full_name"])
                starred_at = _time(item.get("starred_at")) or now
                names.append(name)
                row = known.get(name)
                if row is not None and row.starred_at == starred_at and not row.gone:
                    known_star = True
                if row is None:
                    row = known[name] = StarredRepository(full_name=name, starred_at=starred_at)
                    session.add(row)
                    report.added += 1
                else:
                    report.updated += 1
                description = str(repo.get("description") or "")
                topics = json.dumps([str(t) for t in repo.get("topics") or []])
                if row.description != description or row.topics != topics:
                    row.embedding, row.embedding_model = None, None  # embedded again with its new text
                row.description, row.topics = description, topics
                row.language = repo.get("language")
                row.stars = int(repo.get("stargazers_count") or 0)
                row.html_url = str(repo.get("html_url") or f"https://github.com/{name}")
                row.starred_at = starred_at
                row.pushed_at = _time(repo.get("pushed_at"))
                row.archived = bool(repo.get("archived"))
                row.fork = bool(repo.get("fork"))
                row.gone = False
        return names, known_star

    def _mark_gone(self, seen: set[str]) -> int:
        with self.db.write() as session:
            rows = session.scalars(sa.select(StarredRepository).where(StarredRepository.gone.is_(False))).all()
            gone = [row for row in rows if row.full_name not in seen]
            for row in gone:
                row.gone = True
        return len(gone)

    # --- ranking ------------------------------------------------------------------------------

    @staticmethod
    def needs_embedding(model: str) -> sa.ColumnElement[bool]:
        """The repositories a ranking embeds (again) with ``model``: shown ones without its vector."""
        return sa.and_(
            StarredRepository.gone.is_(False),
            StarredRepository.not_interested.is_(False),
            sa.or_(StarredRepository.embedding_model.is_(None), StarredRepository.embedding_model != model),
        )

    def request_reembedding(self, session: Session, account: str, model: str) -> bool:
        """A ranking (which embeds them) when starred repositories were embedded by another model (a library
        moving to the sentence encoder), unless one waits or one failed in the last day (Retry in Jobs
        does that). True when one was asked for."""
        moved = session.scalar(
            sa.select(StarredRepository.id)
            .where(StarService.needs_embedding(model), StarredRepository.embedding_model.is_not(None))
            .limit(1)
        )
        if moved is None:
            return False
        recent = sa.select(AsyncJob.id).where(
            AsyncJob.job_type == JobType.GITHUB_STAR_RECOMMENDATION,
            AsyncJob.target_id == account,
            sa.or_(
                AsyncJob.status.in_(ACTIVE_JOB_STATUSES),
                sa.and_(AsyncJob.status == JobStatus.FAILED, AsyncJob.created_at > self.clock() - timedelta(days=1)),
            ),
        )
        if session.scalar(recent.limit(1)) is not None:
            return False
        self.request_ranking(session, account)
        return True

    def embed_repositories(self, provider: AIProvider) -> int:
        """Embed the repositories not yet embedded with the provider's model; how many were."""
        model = provider.embedding_model
        done = 0
        while True:
            with self.db.sessions() as session:
                batch = session.scalars(
                    sa.select(StarredRepository).where(self.needs_embedding(model)).limit(EMBED_BATCH)
                ).all()
                texts = [(row.id, repository_text(row)) for row in batch]
            if not texts:
                return done
            vectors = provider.embed([text for _id, text in texts])
            rows = [
                {"id": repo_id, "embedding": to_stored(vector), "embedding_model": model}
                for (repo_id, _text), vector in zip(texts, vectors, strict=True)
            ]
            with self.db.write() as session:
                session.execute(sa.update(StarredRepository), rows)  # one statement per batch, by primary key
            done += len(texts)

    def _tils(self, model: str, since: datetime) -> list[tuple[str, np.ndarray]]:
        """("TIL of DAY", vector) of the days since ``since`` whose TIL has a vector in ``model``'s space
        (``services.til_index``: a TIL of another model is indexed again in the background)."""
        with self.db.sessions() as session:
            rows = til_vectors(session, model, since.date())
        return [(f"TIL of {day}", vector / (np.linalg.norm(vector) or 1.0)) for _id, day, vector in rows]

    def _cards(self, model: str, window_days: int) -> tuple[list[str], np.ndarray, int]:
        """Titles and vectors of what the learner learned lately: the cards and the TILs of the window (the
        newest cards instead when the window holds none); and how many of them are cards (the TILs follow)."""
        since = self.clock() - timedelta(days=window_days)
        query = (
            sa.select(KnowledgeCard.title, CardEmbedding.vector, CardEmbedding.dim)
            .join(CardEmbedding, CardEmbedding.card_id == KnowledgeCard.id)
            .join(Scrap, Scrap.id == KnowledgeCard.scrap_id)
            .where(Scrap.deleted_at.is_(None), CardEmbedding.model_id == model)
        )
        with self.db.sessions() as session:
            rows = session.execute(query.where(KnowledgeCard.created_at >= since)).all()
            if not rows:
                rows = session.execute(query.order_by(KnowledgeCard.created_at.desc()).limit(FALLBACK_CARDS)).all()
        titles = [row.title for row in rows]
        vectors = [from_stored(row.vector, row.dim) for row in rows]
        card_count = len(titles)
        for title, vector in self._tils(model, since):
            if not vectors or vector.shape == vectors[0].shape:
                titles.append(title)
                vectors.append(vector.astype(np.float32))
        if not vectors:
            return [], np.zeros((0, 0), dtype=np.float32), 0
        return titles, np.stack(vectors), card_count

    def rank(self, provider: AIProvider, window_days: int) -> list[tuple[str, float, str]]:
        """(repository id, score, reason) best first, archived ones last: each repository scored by its
        two nearest cards of the last ``window_days`` (its best match, and a second one half as much). A
        best match less likely than not on the card's topic (``ai.calibration``) is called loose, not close."""
        self.embed_repositories(provider)
        model = provider.embedding_model
        titles, cards, card_count = self._cards(model, window_days)
        with self.db.sessions() as session:
            repos = session.execute(
                sa.select(StarredRepository.id, StarredRepository.embedding, StarredRepository.archived).where(
                    StarredRepository.gone.is_(False),
                    StarredRepository.not_interested.is_(False),
                    StarredRepository.embedding_model == model,
                )
            ).all()
        if not repos or not titles:
            return []
        dim = cards.shape[1]
        matrix = np.stack([from_stored(row.embedding, dim) for row in repos])
        scored: list[tuple[bool, float, str, str]] = []
        for start in range(0, len(repos), RANK_CHUNK):
            similarity = matrix[start : start + RANK_CHUNK] @ cards.T
            best = min(2, similarity.shape[1])
            top = np.argpartition(-similarity, best - 1, axis=1)[:, :best]
            for offset, columns in enumerate(top):
                ordered = sorted(columns, key=lambda column: -similarity[offset, column])
                values = [float(similarity[offset, column]) for column in ordered]
                score = values[0] + (0.5 * values[1] if len(values) > 1 else 0.0)
                row = repos[start + offset]
                # as likely on the card's topic as not, by the model's calibration: close
                near = "Close to" if score_of(model, 1.0 - values[0]) >= 0.5 else "Loosely related to"
                matched = [(titles[column], column >= card_count) for column in ordered]
                reason = f"{near} {_what_you_learned(matched)}"
                if row.archived:
                    reason += " (archived)"
                scored.append((bool(row.archived), -score, row.id, reason))
        scored.sort()
        return [(repo_id, -negative, reason) for _archived, negative, repo_id, reason in scored[:KEPT_PER_RUN]]

    def store_run(self, session: Session, run_id: str, ranked: Sequence[tuple[str, float, str]]) -> None:
        """Keep a run's results, and of the earlier runs only the last ``RUNS_KEPT`` (a run that found
        nothing to rank clears them all: what is shown must be the latest run, even when empty)."""
        kept = session.scalars(
            sa.select(StarRecommendation.run_id).distinct().order_by(StarRecommendation.run_id.desc()).limit(RUNS_KEPT)
        ).all()
        older = sa.delete(StarRecommendation)
        if ranked and kept:
            older = older.where(StarRecommendation.run_id.not_in(kept))
        session.execute(older)
        for rank, (repo_id, score, reason) in enumerate(ranked, start=1):
            session.add(StarRecommendation(run_id=run_id, repository_id=repo_id, rank=rank, score=score, reason=reason))

    # --- reading and the learner's choices ----------------------------------------------------

    def latest(self, *, limit: int = 50, language: str | None = None) -> list[Recommendation]:
        """The latest run's recommendations, without those marked "not interested" since."""
        with self.db.sessions() as session:
            run = session.scalar(sa.select(sa.func.max(StarRecommendation.run_id)))
            if run is None:
                return []
            query = (
                sa.select(StarRecommendation, StarredRepository)
                .join(StarredRepository, StarredRepository.id == StarRecommendation.repository_id)
                .where(
                    StarRecommendation.run_id == run,
                    StarredRepository.not_interested.is_(False),
                    StarredRepository.gone.is_(False),
                )
                .order_by(StarRecommendation.rank)
                .limit(limit)
            )
            if language:
                query = query.where(StarredRepository.language == language)
            return [
                Recommendation(
                    repository_id=repo.id,
                    full_name=repo.full_name,
                    description=repo.description,
                    language=repo.language,
                    topics=tuple(json.loads(repo.topics or "[]")),
                    stars=repo.stars,
                    html_url=repo.html_url,
                    archived=repo.archived,
                    rank=found.rank,
                    score=found.score,
                    reason=found.reason,
                )
                for found, repo in session.execute(query)
            ]

    def count_latest(self, *, language: str | None = None) -> int:
        """How many recommendations ``latest`` has without its ``limit`` (what a cut list says it left out)."""
        with self.db.sessions() as session:
            run = session.scalar(sa.select(sa.func.max(StarRecommendation.run_id)))
            if run is None:
                return 0
            query = (
                sa.select(sa.func.count())
                .select_from(StarRecommendation)
                .join(StarredRepository, StarredRepository.id == StarRecommendation.repository_id)
                .where(
                    StarRecommendation.run_id == run,
                    StarredRepository.not_interested.is_(False),
                    StarredRepository.gone.is_(False),
                )
            )
            if language:
                query = query.where(StarredRepository.language == language)
            return int(session.scalar(query) or 0)

    def set_not_interested(self, repository_id: str, not_interested: bool = True) -> Changes:
        """Hide a repository from this and future recommendations (or show it again)."""
        with self.db.write() as session:
            updated = session.execute(
                sa.update(StarredRepository)
                .where(StarredRepository.id == repository_id)
                .values(not_interested=not_interested)
            )
            if not getattr(updated, "rowcount", 0):
                raise SanError(f"No starred repository {repository_id}")
        return Changes(stars=True)  # (new rankings come as their job)

    def status(self) -> StarsStatus:
        with self.db.sessions() as session:
            count = session.scalar(
                sa.select(sa.func.count()).select_from(StarredRepository).where(StarredRepository.gone.is_(False))
            )
            synced = session.scalar(sa.select(sa.func.max(HttpCache.fetched_at)).where(HttpCache.url == FIRST_PAGE))
            ranked = session.scalar(sa.select(sa.func.max(StarRecommendation.created_at)))
            languages = session.scalars(
                sa.select(StarredRepository.language)
                .where(StarredRepository.gone.is_(False), StarredRepository.language.is_not(None))
                .distinct()
                .order_by(StarredRepository.language)
            ).all()
        return StarsStatus(int(count or 0), synced, ranked, tuple(str(language) for language in languages))


def _what_you_learned(matched: Sequence[tuple[str, bool]]) -> str:
    """The matched cards and TILs (title, is a TIL) as people read them: "your cards “A” and “B”", "your
    card “A” and your TIL of 2026-12-01" (a TIL is never named as if it were a card)."""
    cards = [f"“{title}”" for title, til in matched if not til]
    tils = [f"your {title}" for title, til in matched if til]
    parts = [f"your card{'s' if len(cards) > 1 else ''} {' and '.join(cards)}"] if cards else []
    return " and ".join(parts + tils)
