"""What a TIL generation (``jobs.til``) reads and writes of its day: where the TIL stands when a run starts, each
step entered and its output checkpointed with its done state, the draft's AI answers kept as they come, a step's
failure, and the new version published with the TIL COMPLETED in the job's completing transaction. Every status
change goes through ``til_state.set_status`` (the transition table)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import sqlalchemy as sa
from sqlalchemy.orm import Session

from san_desktop.core.enums import TilVersionKind
from san_desktop.core.errors import TargetNotFoundError
from san_desktop.core.workflow import TilStatus
from san_desktop.db.database import Database
from san_desktop.db.models import DailySummary, TilStepOutput
from san_desktop.queue.store import JobStore
from san_desktop.services.quizzes import request_generation
from san_desktop.services.til import TilService
from san_desktop.services.til_index import index_text, save_vector
from san_desktop.services.til_state import record_failure, set_status

DRAFT_PART = "draft-part"  # the step output that names one of the draft's AI answers


@dataclass(frozen=True)
class TilRunStart:
    """Where a day's TIL stands as a run starts."""

    status: TilStatus
    failed_step: str | None
    local_date: str
    next_version: int  # the version this run would publish (its files' names carry it)


@dataclass(frozen=True)
class StepOutput:
    artifact_key: str | None
    data: Any  # what the step recorded (JSON)


@dataclass(frozen=True)
class GeneratedTil:
    """What a run publishes: its text (in ``draft_key``), title, vector, and the cards' revision it read."""

    revision: str
    draft_key: str
    markdown: str
    title: str
    vector: npt.NDArray[np.float32] | None
    embedding_model: str


def _summary(session: Session, summary_id: str) -> DailySummary:
    summary = session.get(DailySummary, summary_id)
    if summary is None:
        raise TargetNotFoundError(f"daily summary {summary_id}")
    return summary


class TilRuns:
    """The TIL generation's reads and writes of one library. ``session`` arguments: the job's checkpoint or
    completing transaction (``JobContext.checkpoint``, ``publish``)."""

    def __init__(self, db: Database, til: TilService) -> None:
        self.db = db
        self.til = til

    def start(self, summary_id: str) -> TilRunStart:
        with self.db.sessions() as session:
            summary = _summary(session, summary_id)
            return TilRunStart(
                TilStatus(summary.status),
                summary.last_failed_step,
                summary.local_date,
                (summary.current_version or 0) + 1,
            )

    @staticmethod
    def record_failure(session: Session, summary_id: str, step: str, message: str) -> None:
        """The TIL FAILED at ``step`` with ``message`` (a TIL deleted meanwhile: nothing to record)."""
        summary = session.get(DailySummary, summary_id)
        if summary is not None:
            record_failure(summary, step, message)

    @staticmethod
    def enter_step(session: Session, summary_id: str, running: TilStatus) -> None:
        """The TIL is inside a step now; entering a step again clears the failure."""
        summary = _summary(session, summary_id)
        set_status(summary, running)
        summary.last_failed_step = None
        summary.last_error_message = None

    @staticmethod
    def finish_step(
        session: Session, summary_id: str, done: TilStatus, step: str, run_id: str, key: str | None, data: Any
    ) -> list[str]:
        """The step's output checkpointed with its done state; the files no row names any more once the draft is
        done (its parts, dropped here: the caller deletes them after the commit)."""
        set_status(_summary(session, summary_id), done)
        session.add(
            TilStepOutput(
                summary_id=summary_id,
                step=step,
                run_id=run_id,
                artifact_key=key,
                data=json.dumps(data, ensure_ascii=False),
            )
        )
        if step != "draft":
            return []
        parts = session.scalars(
            sa.select(TilStepOutput).where(TilStepOutput.summary_id == summary_id, TilStepOutput.step == DRAFT_PART)
        ).all()
        for part in parts:
            session.delete(part)
        return [part.artifact_key for part in parts if part.artifact_key]

    def outputs(self, summary_id: str, steps: list[str]) -> dict[str, StepOutput]:
        """The newest output of each of ``steps`` that has one (earlier runs' finished steps)."""
        found: dict[str, StepOutput] = {}
        with self.db.sessions() as session:
            for step in steps:
                row = session.scalar(
                    sa.select(TilStepOutput)
                    .where(TilStepOutput.summary_id == summary_id, TilStepOutput.step == step)
                    .order_by(TilStepOutput.id.desc())
                    .limit(1)
                )
                if row is not None:
                    found[step] = StepOutput(row.artifact_key, json.loads(row.data or "null"))
        return found

    def draft_parts(self, summary_id: str) -> dict[str, str]:
        """The draft's AI answers kept so far: the file of each, by the key of its call."""
        with self.db.sessions() as session:
            rows = session.execute(
                sa.select(TilStepOutput.artifact_key, TilStepOutput.data).where(
                    TilStepOutput.summary_id == summary_id, TilStepOutput.step == DRAFT_PART
                )
            ).all()
        return {json.loads(data or "{}").get("key"): artifact for artifact, data in rows if artifact}

    @staticmethod
    def add_draft_part(session: Session, summary_id: str, run_id: str, artifact_key: str, key: str) -> None:
        session.add(
            TilStepOutput(
                summary_id=summary_id,
                step=DRAFT_PART,
                run_id=run_id,
                artifact_key=artifact_key,
                data=json.dumps({"key": key}),
            )
        )

    def publish(
        self,
        session: Session,
        queue: JobStore,
        summary_id: str,
        local_date: str,
        made: GeneratedTil,
        *,
        run_id: str,
        quizzes_follow: bool,
    ) -> int:
        """The new version made current, the TIL COMPLETED, its text in search and its vector beside the cards',
        (``quizzes_follow``) the day's quizzes asked for: one transaction with the job's completion. The cards'
        revision the run read is recorded only if the day's cards are still as they were. The version."""
        summary = _summary(session, summary_id)
        revision = made.revision if self.til.current_revision(session, local_date) == made.revision else None
        version = self.til.add_version(
            session,
            summary,
            TilVersionKind.GENERATED,
            made.draft_key,
            made.markdown.encode("utf-8"),
            revision,
            run_id=run_id,
        )
        set_status(summary, TilStatus.COMPLETED)
        summary.title = made.title[:200]
        summary.input_revision = revision
        index_text(session, summary_id, version, made.title[:200], made.markdown)
        if made.vector is not None:
            save_vector(session, summary_id, version, made.embedding_model, made.vector)
        if quizzes_follow:  # with the TIL, or not at all
            request_generation(session, queue, local_date)
        return version
