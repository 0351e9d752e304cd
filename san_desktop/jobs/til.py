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

from san_desktop.ai.base import AIProvider, TilCard
from san_desktop.ai.factory import ProviderSource
from san_desktop.core.errors import TargetNotFoundError
from san_desktop.core.failpoints import pause_here
from san_desktop.core.redact import error_message
from san_desktop.core.workflow import TIL_ACTIVE, TIL_STEPS, Step, TilStatus, resume_step
from san_desktop.db.vectors import from_blob, to_blob
from san_desktop.jobs.registry import JobContext
from san_desktop.queue.errors import JobInterruptedError, JobSupersededError
from san_desktop.services.cards import nearest_cards
from san_desktop.services.root import Services
from san_desktop.services.til import TilService
from san_desktop.services.til_runs import GeneratedTil, TilRuns

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

    @property
    def runs(self) -> TilRuns:
        return self.services.til_runs

    def recall_limit(self) -> int:
        return self.services.settings().til.recall_limit

    def quizzes_follow(self) -> bool:
        """Whether a finished TIL asks for its day's quizzes."""
        return self.services.settings().quiz.generate_after_til

    def __call__(self, context: JobContext) -> None:
        summary_id = context.job.target_id
        begun = self.runs.start(summary_id)
        status, failed_step = begun.status, begun.failed_step
        if status in TIL_ACTIVE:  # a crash inside a step: say so, then go on from that step
            failed_step = next(step.name for step in TIL_STEPS if step.running is status)
            with context.checkpoint() as session:
                self.runs.record_failure(session, summary_id, failed_step, INTERRUPTED)
            status = TilStatus.FAILED
        start = resume_step(status, failed_step)
        run = _Run(context, self, summary_id, begun.local_date, begun.next_version)
        with self.providers.lease() as provider:
            run.provider = provider
            if start:
                run.load_outputs(TIL_STEPS[:start])
            for index in range(start, len(TIL_STEPS)):
                run.do(index)
            run.publish()


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
        runs = self.owner.runs
        with context.checkpoint() as session:
            runs.enter_step(session, self.summary_id, step.running)
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
            done_with = runs.finish_step(session, self.summary_id, step.done, step.name, context.run_id, key, data)
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
        outputs = self.owner.runs.outputs(self.summary_id, [step.name for step in steps])
        for step in steps:
            row = outputs.get(step.name)
            if row is None:
                raise TargetNotFoundError(f"the output of the {step.name} step of {self.local_date}")
            data = row.data
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
        made = GeneratedTil(
            self.revision, self.draft_key, self.markdown, self.title, self.vector, self.embedding_model
        )  # (the vector: made by the embed step)
        with self.context.publish() as session:
            version = self.owner.runs.publish(
                session,
                self.context.queue,
                self.summary_id,
                self.local_date,
                made,
                run_id=self.context.run_id,
                quizzes_follow=self.owner.quizzes_follow(),
            )
        log.info("TIL of %s published as version %d", self.local_date, version)

    def _fail(self, step: Step, exc: BaseException) -> None:
        try:
            with self.context.db.write() as session:
                if self.context.queue.still_owned(session, self.context.claim):
                    self.owner.runs.record_failure(session, self.summary_id, step.name, error_message(exc))
        except Exception:
            log.exception("Could not record the failure of the %s step of %s", step.name, self.local_date)


class _KeptDraftParts:
    """The draft step's AI answers (``ai.base.KeptParts``), kept as they come: each a file of this run,
    published at once with a ``draft-part`` step output naming its key. A run killed midway (or failed on a
    later call) resumes without asking again; the key holds the call's whole input, so a part of other
    cards is never taken. Once the draft is done they are no longer needed: ``TilRuns.finish_step`` drops them."""

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.known = run.owner.runs.draft_parts(run.summary_id)

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
            self.run.owner.runs.add_draft_part(session, self.run.summary_id, context.run_id, artifact, key)
        self.known[key] = artifact


def _card(item: dict[str, Any]) -> TilCard:
    return TilCard(**{**item, "tags": tuple(item["tags"]), "code_blocks": tuple(item["code_blocks"])})
