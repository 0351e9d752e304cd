"""TIL_GENERATION (target: daily summary id): collect → draft → embed → link, then publish a version.

Each step enters its in-progress state, does its work outside any transaction, and checkpoints its
output (a run-scoped file and/or small JSON) with its done state. A failure records FAILED with the step
and the cause chain; a retry resumes at the failed step and reuses what finished steps produced, so no
AI call is repeated for them. Every status change goes through the transition table.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.ai.base import AIProvider, TilCard
from san_desktop.ai.factory import ProviderSource
from san_desktop.core.enums import TilVersionKind
from san_desktop.core.errors import TargetNotFoundError
from san_desktop.core.failpoints import pause_here
from san_desktop.core.redact import error_message
from san_desktop.core.workflow import TIL_ACTIVE, TIL_STEPS, Step, TilStatus, resume_step
from san_desktop.db.models import DailySummary, TilStepOutput
from san_desktop.db.vectors import from_blob, to_blob
from san_desktop.jobs.registry import JobContext
from san_desktop.queue.errors import JobInterruptedError, JobSupersededError
from san_desktop.services.cards import nearest_cards
from san_desktop.services.quizzes import request_generation
from san_desktop.services.root import Services
from san_desktop.services.til import TilService
from san_desktop.services.til_index import index_text, save_vector
from san_desktop.services.til_state import record_failure, set_status

log = logging.getLogger(__name__)

ARTIFACT_KIND = "til"
INTERRUPTED = "The app stopped while this step ran; it was started again."


class TilGenerationProcessor:
    def __init__(self, providers: ProviderSource, services: Services) -> None:
        self.providers = providers
        self.services = services  # settings read per run: the learner's time zone may have changed

    @property
    def til(self) -> TilService:
        return self.services.til

    def recall_limit(self) -> int:
        return self.services.settings().til.recall_limit

    def quizzes_follow(self) -> bool:
        """Whether a finished TIL asks for its day's quizzes."""
        return self.services.settings().quiz.generate_after_til

    def __call__(self, context: JobContext) -> None:
        summary_id = context.job.target_id
        with context.db.sessions() as session:
            summary = session.get(DailySummary, summary_id)
            if summary is None:
                raise TargetNotFoundError(f"daily summary {summary_id}")
            status, failed_step, local_date = TilStatus(summary.status), summary.last_failed_step, summary.local_date
            next_version = (summary.current_version or 0) + 1
        if status in TIL_ACTIVE:  # a crash inside a step: say so, then go on from that step
            failed_step = next(step.name for step in TIL_STEPS if step.running is status)
            with context.checkpoint() as session:
                self._record_failure(session, summary_id, failed_step, INTERRUPTED)
            status = TilStatus.FAILED
        start = resume_step(status, failed_step)
        run = _Run(context, self, summary_id, local_date, next_version)
        with self.providers.lease() as provider:
            run.provider = provider
            if start:
                run.load_outputs(TIL_STEPS[:start])
            for index in range(start, len(TIL_STEPS)):
                run.do(index)
            run.publish()

    @staticmethod
    def _record_failure(session: Session, summary_id: str, step: str, message: str) -> None:
        summary = session.get(DailySummary, summary_id)
        if summary is not None:
            record_failure(summary, step, message)


class _Run:
    """One execution: what the finished steps produced, and each step's work."""

    def __init__(
        self, context: JobContext, owner: TilGenerationProcessor, summary_id: str, local_date: str, version: int
    ) -> None:
        self.context = context
        self.owner = owner
        self.summary_id = summary_id
        self.local_date = local_date
        self.version = version  # the version this run would publish (artifact names carry it)
        self.provider: AIProvider | None = None
        self.cards: list[TilCard] = []
        self.revision = ""
        self.draft_key = ""
        self.title = ""
        self.markdown = ""
        self.vector: np.ndarray[Any, Any] | None = None
        self.embedding_model = ""

    # --- steps --------------------------------------------------------------------------------

    def do(self, index: int) -> None:
        step = TIL_STEPS[index]
        context = self.context
        context.progress(step.name, index + 1, len(TIL_STEPS))
        with context.checkpoint() as session:
            summary = self._summary(session)
            set_status(summary, step.running)
            summary.last_failed_step = None  # entering a step again clears the failure
            summary.last_error_message = None
        try:
            pause_here(f"til.{step.name}")  # crash tests kill the runner here
            output = getattr(self, f"_{step.name}")()
            context.raise_if_cancelled()
        except (JobInterruptedError, JobSupersededError):
            raise  # back to the queue, or no longer ours: the next run takes it from here
        except Exception as exc:
            self._fail(step, exc)
            raise
        key, data = output
        with context.checkpoint() as session:
            set_status(self._summary(session), step.done)
            session.add(
                TilStepOutput(
                    summary_id=self.summary_id,
                    step=step.name,
                    run_id=context.run_id,
                    artifact_key=key,
                    data=json.dumps(data, ensure_ascii=False),
                )
            )
            done_with = _KeptDraftParts.forget(session, self.summary_id) if step.name == "draft" else []
        for part in done_with:  # (no row refers to them any more)
            context.files.store.delete(part)

    def _collect(self) -> tuple[str, dict[str, Any]]:
        self.cards, self.revision = self.owner.til.collect(self.local_date)
        if not self.cards:
            raise TargetNotFoundError(f"no cards are left on {self.local_date}")
        payload = json.dumps([asdict(card) for card in self.cards], ensure_ascii=False)
        key = self.context.files.write_text(ARTIFACT_KIND, self.summary_id, self.version, "cards.json", payload)
        return key, {"revision": self.revision, "cards": len(self.cards)}

    def _draft(self) -> tuple[str, dict[str, Any]]:
        assert self.provider is not None
        draft = self.provider.write_til(self.local_date, self.cards, _KeptDraftParts(self))
        self.title, self.markdown = draft.title, draft.markdown
        key = self.context.files.write_text(ARTIFACT_KIND, self.summary_id, self.version, "md", draft.markdown)
        self.draft_key = key
        return key, {"title": draft.title}

    def _embed(self) -> tuple[str, dict[str, Any]]:
        assert self.provider is not None
        self.vector = self.provider.embed([self.markdown])[0]
        self.embedding_model = self.provider.embedding_model
        key = self.context.files.write_bytes(ARTIFACT_KIND, self.summary_id, self.version, "f32", to_blob(self.vector))
        return key, {"model": self.embedding_model, "dim": int(self.vector.shape[0])}

    def _link(self) -> tuple[None, list[dict[str, Any]]]:
        assert self.provider is not None
        assert self.vector is not None
        own = {card.card_id for card in self.cards}
        with self.context.db.sessions() as session:
            found = nearest_cards(
                session,
                self.embedding_model,
                self.vector,
                self.provider.similarity_threshold,
                own,
                self.owner.recall_limit(),
            )
        return None, [
            {"card_id": item.card.id, "title": item.card.title, "distance": item.distance,
             "within_threshold": item.within_threshold}
            for item in found
        ]  # fmt: skip

    # --- resuming -----------------------------------------------------------------------------

    def load_outputs(self, steps: tuple[Step, ...]) -> None:
        """What finished steps of earlier runs produced: their newest outputs, read back."""
        artifacts = self.context.files.store
        with self.context.db.sessions() as session:
            for step in steps:
                row = session.scalar(
                    sa.select(TilStepOutput)
                    .where(TilStepOutput.summary_id == self.summary_id, TilStepOutput.step == step.name)
                    .order_by(TilStepOutput.id.desc())
                    .limit(1)
                )
                if row is None:
                    raise TargetNotFoundError(f"the output of the {step.name} step of {self.local_date}")
                data = json.loads(row.data or "null")
                if step.name == "collect" and row.artifact_key:
                    self.cards = [_card(item) for item in json.loads(artifacts.read_text(row.artifact_key))]
                    self.revision = data["revision"]
                elif step.name == "draft" and row.artifact_key:
                    self.draft_key, self.title = row.artifact_key, data["title"]
                    self.markdown = artifacts.read_text(row.artifact_key)
                elif step.name == "embed" and row.artifact_key:
                    self.vector = from_blob(artifacts.read_bytes(row.artifact_key)).copy()
                    self.embedding_model = data["model"]

    # --- the end ------------------------------------------------------------------------------

    def publish(self) -> None:
        """One transaction: the new version, the summary COMPLETED, the job completed. The input revision
        captured at the start is recorded only if the day's cards are still as they were."""
        til = self.owner.til
        with self.context.publish() as session:
            summary = self._summary(session)
            current = til.current_revision(session, self.local_date)
            revision = self.revision if current == self.revision else None
            version = til.add_version(
                session,
                summary,
                TilVersionKind.GENERATED,
                self.draft_key,
                self.markdown.encode("utf-8"),
                revision,
                run_id=self.context.run_id,
            )
            set_status(summary, TilStatus.COMPLETED)
            summary.title = self.title[:200]
            summary.input_revision = revision
            # the new text in search and its vector beside the cards' (made by the embed step)
            index_text(session, self.summary_id, version, self.title[:200], self.markdown)
            if self.vector is not None:
                save_vector(session, self.summary_id, version, self.embedding_model, self.vector)
            if self.owner.quizzes_follow():  # with the TIL, or not at all
                request_generation(session, self.context.queue, self.local_date)
        log.info("TIL of %s published as version %d", self.local_date, version)

    def _summary(self, session: Session) -> DailySummary:
        summary = session.get(DailySummary, self.summary_id)
        if summary is None:
            raise TargetNotFoundError(f"daily summary {self.summary_id}")
        return summary

    def _fail(self, step: Step, exc: BaseException) -> None:
        try:
            with self.context.db.write() as session:
                if self.context.queue.still_owned(session, self.context.claim):
                    TilGenerationProcessor._record_failure(session, self.summary_id, step.name, error_message(exc))
        except Exception:
            log.exception("Could not record the failure of the %s step of %s", step.name, self.local_date)


class _KeptDraftParts:
    """The draft step's AI answers (``ai.base.KeptParts``), kept as they come: each a file of this run,
    published at once with a ``draft-part`` step output naming its key. A run killed midway (or failed on a
    later call) resumes without asking again; the key holds the call's whole input, so a part of other
    cards is never taken. Once the draft is done they are no longer needed: ``forget`` drops them."""

    STEP = "draft-part"

    def __init__(self, run: _Run) -> None:
        self.run = run
        with run.context.db.sessions() as session:
            rows = session.execute(
                sa.select(TilStepOutput.artifact_key, TilStepOutput.data).where(
                    TilStepOutput.summary_id == run.summary_id, TilStepOutput.step == self.STEP
                )
            ).all()
        self.known = {json.loads(data or "{}").get("key"): key for key, data in rows if key}

    def get(self, key: str) -> str | None:
        artifact = self.known.get(key)
        if artifact is None:
            return None
        try:
            return self.run.context.files.store.read_text(artifact)
        except OSError:
            return None  # (gone: asked again)

    def put(self, key: str, text: str) -> None:
        context = self.run.context
        ext = f"part-{key[:16]}.md"  # (one file per part: several in one run)
        artifact = context.files.write_text(ARTIFACT_KIND, self.run.summary_id, self.run.version, ext, text)
        with context.checkpoint() as session:
            session.add(
                TilStepOutput(
                    summary_id=self.run.summary_id,
                    step=self.STEP,
                    run_id=context.run_id,
                    artifact_key=artifact,
                    data=json.dumps({"key": key}),
                )
            )
        self.known[key] = artifact

    @classmethod
    def forget(cls, session: Session, summary_id: str) -> list[str]:
        """Drop the parts of ``summary_id`` (in the caller's transaction); the files they named."""
        rows = session.scalars(
            sa.select(TilStepOutput).where(TilStepOutput.summary_id == summary_id, TilStepOutput.step == cls.STEP)
        ).all()
        for row in rows:
            session.delete(row)
        return [row.artifact_key for row in rows if row.artifact_key]


def _card(item: dict[str, Any]) -> TilCard:
    return TilCard(**{**item, "tags": tuple(item["tags"]), "code_blocks": tuple(item["code_blocks"])})
